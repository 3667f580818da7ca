// What the client listener knows of its users: per user and mechanism, the
// salted verifiers of RFC 5802 section 3 for SCRAM (salt, iteration count,
// StoredKey, ServerKey) and a salted PBKDF2-HMAC-SHA-256 hash for PLAIN.
// Never a clear password: what the users file holds and what the server
// mechanisms compare against. Plain data; any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/sasl/scram_crypto.h"

namespace pp::sasl {

// The iteration count `users add` writes: Kafka's minimum for SCRAM
// (kScramMinIterations), and the same for the PLAIN hash, whose check costs
// one PBKDF2 run of this many iterations per login (off the loop thread:
// ServerStep::slow_check).
inline constexpr int kDefaultIterations = 4096;
// Upper bound on a stored count: a users file cannot make one login cost
// more than this many HMACs.
inline constexpr int kMaxStoredIterations = 1000000;
inline constexpr std::size_t kSaltBytes = 24;

// RFC 5802 section 3: SaltedPassword = Hi(password, salt, i), StoredKey =
// H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword,
// "Server Key").
struct ScramCredential {
  Bytes salt;
  int iterations = kDefaultIterations;
  Bytes stored_key;
  Bytes server_key;
  bool operator==(const ScramCredential&) const = default;
};

// hash = PBKDF2-HMAC-SHA-256(password, salt, iterations), 32 bytes.
struct PlainCredential {
  Bytes salt;
  int iterations = kDefaultIterations;
  Bytes hash;
  bool operator==(const PlainCredential&) const = default;
};

struct UserCredentials {
  std::optional<PlainCredential> plain;
  std::optional<ScramCredential> scram_sha256;
  std::optional<ScramCredential> scram_sha512;
  bool operator==(const UserCredentials&) const = default;
};

// Users by name. Shared read-only (std::shared_ptr<const UserStore>) by the
// exchanges in progress, so a reload never changes one under an exchange.
using UserStore = std::map<std::string, UserCredentials, std::less<>>;

// The mechanisms the listener can serve, by their wire names.
inline constexpr std::string_view kPlain = "PLAIN";
inline constexpr std::string_view kScramSha256 = "SCRAM-SHA-256";
inline constexpr std::string_view kScramSha512 = "SCRAM-SHA-512";
bool known_mechanism(std::string_view mechanism);

// A user name the listener accepts: 1-255 bytes of printable ASCII without
// space (SASLprep of that is the identity, so no normalisation is skipped).
bool valid_user_name(std::string_view name);

// New credentials from a password, with a fresh salt from RAND_bytes;
// nullopt when the generator failed.
std::optional<ScramCredential> make_scram_credential(ScramHash hash, std::string_view password,
                                                     int iterations = kDefaultIterations);
std::optional<PlainCredential> make_plain_credential(std::string_view password, int iterations = kDefaultIterations);
// PBKDF2 of `password` under the credential's salt, compared in constant time.
bool verify_plain_password(const PlainCredential& credential, std::string_view password);

// The entry of `user` for `mechanism`, set from `password` (the others of
// the user kept). False when the generator failed or the mechanism is unknown.
bool set_credential(UserCredentials& user, std::string_view mechanism, std::string_view password,
                    int iterations = kDefaultIterations);

}  // namespace pp::sasl
