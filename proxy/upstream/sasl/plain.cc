#include "proxy/upstream/sasl/plain.h"

namespace pp::upstream::sasl {

std::expected<Bytes, SaslError> PlainMechanism::initial_response() {
  // RFC 4616 section 2: UTF8NUL separates the fields, so none may contain one.
  if (username_.find('\0') != std::string::npos || password_.find('\0') != std::string::npos) {
    return std::unexpected(SaslError{"PLAIN: the username or password contains a NUL byte"});
  }
  sent_ = true;
  std::string message;
  message.reserve(username_.size() + password_.size() + 2);
  message += '\0';
  message += username_;
  message += '\0';
  message += password_;
  return to_bytes(message);
}

std::expected<std::optional<Bytes>, SaslError> PlainMechanism::evaluate(ByteView challenge) {
  // Kafka's PlainSaslServer answers success with no bytes; anything else is
  // not PLAIN.
  if (!sent_) return std::unexpected(SaslError{"PLAIN: a challenge arrived before the initial response"});
  if (!challenge.empty()) return std::unexpected(SaslError{"PLAIN: the server sent an unexpected challenge"});
  return std::optional<Bytes>{};
}

}  // namespace pp::upstream::sasl
