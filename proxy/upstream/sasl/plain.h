// SASL PLAIN (RFC 4616): one message, authzid empty, "\0username\0password".
// The password crosses the wire in the clear, so the configuration refuses
// PLAIN without TLS unless the operator allows it (upstream.sasl).
#pragma once

#include <string>

#include "proxy/upstream/sasl/mechanism.h"

namespace pp::upstream::sasl {

class PlainMechanism final : public SaslMechanism {
 public:
  PlainMechanism(std::string username, std::string password)
      : username_(std::move(username)), password_(std::move(password)) {}

  std::string_view name() const override { return "PLAIN"; }
  std::expected<Bytes, SaslError> initial_response() override;
  std::expected<std::optional<Bytes>, SaslError> evaluate(ByteView challenge) override;

 private:
  std::string username_;
  std::string password_;
  bool sent_ = false;
};

}  // namespace pp::upstream::sasl
