#include "proxy/sasl/server_mechanism.h"

#include <string>

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

std::expected<ServerStep, AuthFailure> ServerMechanism::conclude(bool /*passed*/) {
  return std::unexpected(AuthFailure{AuthFailureReason::kProtocol, std::string(name()) + ": no check to conclude"});
}

std::expected<ServerStep, AuthFailure> evaluate_in_place(ServerMechanism& mechanism, ByteView response) {
  auto step = mechanism.evaluate(response);
  if (!step || !step->slow_check) return step;
  return mechanism.conclude(step->slow_check());
}

std::unique_ptr<ServerMechanism> make_server_mechanism(std::string_view mechanism,
                                                       std::shared_ptr<const UserStore> users, Bytes decoy_secret,
                                                       std::string server_nonce) {
  if (mechanism == kPlain) return std::make_unique<PlainServer>(std::move(users), std::move(decoy_secret));
  if (mechanism == kScramSha256 || mechanism == kScramSha512) {
    const ScramHash hash = mechanism == kScramSha256 ? ScramHash::kSha256 : ScramHash::kSha512;
    return std::make_unique<ScramServer>(hash, std::move(users), std::move(decoy_secret), std::move(server_nonce));
  }
  return nullptr;
}

}  // namespace pp::sasl
