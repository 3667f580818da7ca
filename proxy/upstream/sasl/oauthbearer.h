// SASL OAUTHBEARER client (RFC 7628) as Kafka's OAuthBearerSaslServer speaks
// it: the client-first message "n,,\x01auth=Bearer <token>\x01\x01", answered
// with nothing on success. On a bad token the server sends its error JSON as
// a challenge (RFC 7628 section 3.2.2); the client answers with a lone
// "\x01" and the server then fails the exchange with an error code.
#pragma once

#include <string>

#include "proxy/upstream/sasl/mechanism.h"

namespace pp::upstream::sasl {

// The client-first message for `token` (RFC 7628 section 3.1, no authzid).
std::expected<Bytes, SaslError> oauthbearer_client_first(std::string_view token);

class OAuthBearerMechanism final : public SaslMechanism {
 public:
  explicit OAuthBearerMechanism(std::string token) : token_(std::move(token)) {}

  std::string_view name() const override { return "OAUTHBEARER"; }
  std::expected<Bytes, SaslError> initial_response() override;
  std::expected<std::optional<Bytes>, SaslError> evaluate(ByteView challenge) override;

 private:
  std::string token_;
  bool sent_ = false;
  bool answered_error_ = false;
};

}  // namespace pp::upstream::sasl
