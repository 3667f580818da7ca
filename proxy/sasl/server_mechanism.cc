#include "proxy/sasl/server_mechanism.h"

#include "proxy/sasl/plain_server.h"
#include "proxy/sasl/scram_server.h"

namespace pp::sasl {

std::string_view to_string(AuthFailureReason reason) {
  switch (reason) {
    case AuthFailureReason::kMalformed:
      return "malformed";
    case AuthFailureReason::kUnknownUser:
      return "unknown_user";
    case AuthFailureReason::kBadPassword:
      return "bad_password";
    case AuthFailureReason::kUnsupportedMechanism:
      return "unsupported_mechanism";
    case AuthFailureReason::kProtocol:
      return "protocol";
  }
  return "malformed";
}

std::unique_ptr<ServerMechanism> make_server_mechanism(std::string_view mechanism,
                                                       std::shared_ptr<const UserStore> users,
                                                       std::string server_nonce) {
  if (mechanism == kPlain) return std::make_unique<PlainServer>(std::move(users));
  if (mechanism == kScramSha256) {
    return std::make_unique<ScramServer>(ScramHash::kSha256, std::move(users), std::move(server_nonce));
  }
  if (mechanism == kScramSha512) {
    return std::make_unique<ScramServer>(ScramHash::kSha512, std::move(users), std::move(server_nonce));
  }
  return nullptr;
}

}  // namespace pp::sasl
