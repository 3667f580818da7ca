#include "proxy/sasl/user_credentials.h"

#include <algorithm>

#include "proxy/sasl/scram_crypto.h"

namespace pp::sasl {
namespace {

Bytes text_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

}  // namespace

bool known_mechanism(std::string_view mechanism) {
  return mechanism == kPlain || mechanism == kScramSha256 || mechanism == kScramSha512;
}

bool valid_user_name(std::string_view name) {
  constexpr std::size_t kMaxNameBytes = 255;
  return !name.empty() && name.size() <= kMaxNameBytes &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
}

std::optional<ScramCredential> make_scram_credential(ScramHash hash, std::string_view password, int iterations) {
  auto salt = random_bytes(kSaltBytes);
  if (!salt) return std::nullopt;
  const Bytes salted = scram_hi(hash, password, *salt, iterations);
  ScramCredential out;
  out.iterations = iterations;
  out.stored_key = scram_hash(hash, scram_hmac(hash, salted, text_bytes("Client Key")));
  out.server_key = scram_hmac(hash, salted, text_bytes("Server Key"));
  out.salt = std::move(*salt);
  return out;
}

std::optional<PlainCredential> make_plain_credential(std::string_view password, int iterations) {
  auto salt = random_bytes(kSaltBytes);
  if (!salt) return std::nullopt;
  PlainCredential out;
  out.iterations = iterations;
  out.hash = scram_hi(ScramHash::kSha256, password, *salt, iterations);
  out.salt = std::move(*salt);
  return out;
}

bool verify_plain_password(const PlainCredential& credential, std::string_view password) {
  const Bytes hash = scram_hi(ScramHash::kSha256, password, credential.salt, credential.iterations);
  return constant_time_equal(hash, credential.hash);
}

bool set_credential(UserCredentials& user, std::string_view mechanism, std::string_view password, int iterations) {
  if (mechanism == kPlain) {
    user.plain = make_plain_credential(password, iterations);
    return user.plain.has_value();
  }
  if (mechanism == kScramSha256 || mechanism == kScramSha512) {
    const ScramHash hash = mechanism == kScramSha256 ? ScramHash::kSha256 : ScramHash::kSha512;
    auto& slot = hash == ScramHash::kSha256 ? user.scram_sha256 : user.scram_sha512;
    slot = make_scram_credential(hash, password, iterations);
    return slot.has_value();
  }
  return false;
}

}  // namespace pp::sasl
