#include "proxy/sasl/decoy_credentials.h"

#include <string>

#include "proxy/sasl/scram_crypto.h"

namespace pp::sasl {
namespace {

// HMAC-SHA-256(secret, purpose NUL mechanism NUL user), stretched to `size`
// bytes by counter-mode blocks (HKDF-expand's shape, RFC 5869 section 2.3).
Bytes derive(ByteView secret, std::string_view purpose, std::string_view mechanism, std::string_view user,
             std::size_t size) {
  std::string label(purpose);
  label += '\0';
  label += mechanism;
  label += '\0';
  label += user;
  Bytes out;
  for (std::uint8_t block = 1; out.size() < size; ++block) {
    Bytes input(label.begin(), label.end());
    input.push_back(block);
    const Bytes part = scram_hmac(ScramHash::kSha256, secret, input);
    out.insert(out.end(), part.begin(), part.end());
  }
  out.resize(size);
  return out;
}

}  // namespace

ScramCredential decoy_scram_credential(ScramHash hash, ByteView secret, std::string_view user) {
  const std::string_view mechanism = scram_mechanism_name(hash);
  const std::size_t key_bytes = hash == ScramHash::kSha256 ? 32 : 64;
  ScramCredential out;
  out.salt = derive(secret, "salt", mechanism, user, kSaltBytes);
  out.iterations = kDefaultIterations;
  out.stored_key = derive(secret, "stored_key", mechanism, user, key_bytes);
  out.server_key = derive(secret, "server_key", mechanism, user, key_bytes);
  return out;
}

PlainCredential decoy_plain_credential(ByteView secret, std::string_view user) {
  PlainCredential out;
  out.salt = derive(secret, "salt", kPlain, user, kSaltBytes);
  out.iterations = kDefaultIterations;
  out.hash = derive(secret, "hash", kPlain, user, 32);
  return out;
}

}  // namespace pp::sasl
