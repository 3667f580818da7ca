#include "proxy/upstream/sasl/oauthbearer.h"

#include <algorithm>

namespace pp::upstream::sasl {

std::expected<Bytes, SaslError> oauthbearer_client_first(std::string_view token) {
  // RFC 6750's b64token: the token must not break the kvpair framing.
  const bool framed = std::all_of(token.begin(), token.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
  if (token.empty() || !framed) {
    return std::unexpected(SaslError{"OAUTHBEARER: the token is empty or has characters outside printable ASCII"});
  }
  std::string message =
      "n,,\x01"
      "auth=Bearer ";
  message += token;
  message += "\x01\x01";
  return to_bytes(message);
}

std::expected<Bytes, SaslError> OAuthBearerMechanism::initial_response() {
  sent_ = true;
  return oauthbearer_client_first(token_);
}

std::expected<std::optional<Bytes>, SaslError> OAuthBearerMechanism::evaluate(ByteView challenge) {
  if (!sent_ || answered_error_) return std::unexpected(SaslError{"OAUTHBEARER: a challenge arrived out of turn"});
  if (challenge.empty()) return std::optional<Bytes>{};
  // The server's error JSON: acknowledge it so the broker ends the exchange
  // with its error code and message, which the connection logs.
  answered_error_ = true;
  return std::optional<Bytes>(Bytes{0x01});
}

}  // namespace pp::upstream::sasl
