// SCRAM-SHA-256 and SCRAM-SHA-512 client (RFC 5802, RFC 7677), as Kafka's
// ScramSaslServer speaks them: no channel binding ("n,,"), no authzid, no
// extensions. Three messages: client-first, then client-final in answer to
// server-first, then server-final is verified (the server proves it knows
// the salted password too). Parsing of the server's messages is strict:
// attributes in RFC order, nothing unknown before the mandatory ones, a nonce
// that extends ours, an iteration count in [4096, 65536] (Kafka's minimum;
// the cap bounds the PBKDF2 work a hostile broker can make us do on the loop).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/sasl/scram_crypto.h"
#include "proxy/upstream/sasl/mechanism.h"

namespace pp::upstream::sasl {

// The hash choice and the iteration bounds are shared with the listener's
// SCRAM server (proxy/sasl/scram_crypto.h).
using ::pp::sasl::kScramMaxIterations;
using ::pp::sasl::kScramMinIterations;
using ::pp::sasl::ScramHash;

struct ServerFirst {
  std::string nonce;  // client nonce + server nonce
  Bytes salt;
  int iterations = 0;
};

struct ServerFinal {
  Bytes server_signature;
};

// RFC 5802 section 7 server-first-message; client_nonce is what we sent.
std::expected<ServerFirst, SaslError> parse_server_first(std::string_view message, std::string_view client_nonce);
// server-final-message: "v=" signature, or "e=" error (returned as a failure).
std::expected<ServerFinal, SaslError> parse_server_final(std::string_view message);
// saslname (RFC 5802 section 5.1): "=" as "=3D", "," as "=2C". Printable
// ASCII only (SASLprep of that is the identity); anything else is refused
// rather than sent unprepared.
std::expected<std::string, SaslError> scram_username(std::string_view username);

class ScramMechanism final : public SaslMechanism {
 public:
  // client_nonce: empty for a fresh random one (RAND_bytes); tests inject
  // RFC 7677's.
  ScramMechanism(ScramHash hash, std::string username, std::string password, std::string client_nonce = {});

  std::string_view name() const override;
  std::expected<Bytes, SaslError> initial_response() override;
  std::expected<std::optional<Bytes>, SaslError> evaluate(ByteView challenge) override;

 private:
  enum class Step : std::uint8_t { kStart, kSentFirst, kSentFinal, kDone };
  std::expected<std::optional<Bytes>, SaslError> client_final(std::string_view server_first);
  std::expected<std::optional<Bytes>, SaslError> verify_server_final(std::string_view server_final);

  ScramHash hash_;
  std::string username_;
  std::string password_;
  std::string client_nonce_;
  Step step_ = Step::kStart;
  std::string client_first_bare_;
  Bytes expected_server_signature_;
};

}  // namespace pp::upstream::sasl
