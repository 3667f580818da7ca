#include "proxy/sasl/scram_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace pp::sasl {
namespace {

const EVP_MD* digest(ScramHash hash) {
  return hash == ScramHash::kSha256 ? EVP_sha256() : EVP_sha512();
}

}  // namespace

std::string_view scram_mechanism_name(ScramHash hash) {
  return hash == ScramHash::kSha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

Bytes scram_hash(ScramHash hash, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &size, digest(hash), nullptr);
  out.resize(size);
  return out;
}

Bytes scram_hmac(ScramHash hash, ByteView key, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int size = 0;
  HMAC(digest(hash), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out.data(), &size);
  out.resize(size);
  return out;
}

Bytes scram_hi(ScramHash hash, std::string_view password, ByteView salt, int iterations) {
  Bytes out(static_cast<std::size_t>(EVP_MD_get_size(digest(hash))));
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(), static_cast<int>(salt.size()),
                    iterations, digest(hash), static_cast<int>(out.size()), out.data());
  return out;
}

std::optional<Bytes> random_bytes(std::size_t count) {
  Bytes out(count);
  if (RAND_bytes(out.data(), static_cast<int>(count)) != 1) return std::nullopt;
  return out;
}

bool constant_time_equal(ByteView a, ByteView b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace pp::sasl
