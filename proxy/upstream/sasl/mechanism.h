// One SASL mechanism as a client runs it (RFC 4422 section 3): an initial
// response, then each server challenge answered until the exchange is done
// or has failed. The broker connection carries the messages in
// SaslAuthenticate requests (KIP-152) and knows nothing of what is in them.
//
//   auto mech = make_mechanism(...);
//   send(mech->initial_response());
//   on each SaslAuthenticate answer: auto next = mech->evaluate(auth_bytes);
//     error -> authentication failed (the text names no secret)
//     nullopt -> done, authenticated; bytes -> send them, wait again
//
// Pure: no sockets, no clock, no logging ("Codecs are pure functions over byte
// spans", ARCHITECTURE.md, rules of the house), so the message parsers can be
// unit-tested on RFC vectors and fuzzed.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"

namespace pp::upstream::sasl {

// Why an exchange failed, in words fit for a log line: never a password,
// token or salted value.
struct SaslError {
  std::string reason;
};

class SaslMechanism {
 public:
  virtual ~SaslMechanism() = default;
  // Kafka's name for it, sent in SaslHandshake.
  virtual std::string_view name() const = 0;
  virtual std::expected<Bytes, SaslError> initial_response() = 0;
  // The server's bytes for the last message: the next message to send, or
  // nullopt when the exchange completed successfully.
  virtual std::expected<std::optional<Bytes>, SaslError> evaluate(ByteView challenge) = 0;
};

inline Bytes to_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}
inline std::string_view as_text(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace pp::upstream::sasl
