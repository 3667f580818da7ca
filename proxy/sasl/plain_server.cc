#include "proxy/sasl/plain_server.h"

#include <algorithm>
#include <string>

#include "proxy/sasl/decoy_credentials.h"

namespace pp::sasl {
namespace {

AuthFailure failure(AuthFailureReason reason, std::string detail) {
  return AuthFailure{reason, "PLAIN: " + std::move(detail)};
}

}  // namespace

std::expected<PlainToken, AuthFailure> parse_plain_token(ByteView token) {
  const std::string_view text(reinterpret_cast<const char*>(token.data()), token.size());
  const std::size_t first = text.find('\0');
  const std::size_t second = first == std::string_view::npos ? first : text.find('\0', first + 1);
  if (second == std::string_view::npos || text.find('\0', second + 1) != std::string_view::npos) {
    return std::unexpected(failure(AuthFailureReason::kMalformed, "the token is not authzid NUL authcid NUL passwd"));
  }
  PlainToken out{std::string(text.substr(0, first)), std::string(text.substr(first + 1, second - first - 1)),
                 std::string(text.substr(second + 1))};
  if (out.authcid.empty() || out.password.empty()) {
    return std::unexpected(failure(AuthFailureReason::kMalformed, "empty user name or password"));
  }
  if (!valid_user_name(out.authcid)) {
    return std::unexpected(failure(AuthFailureReason::kMalformed, "the user name is not printable ASCII"));
  }
  return out;
}

PlainServer::PlainServer(std::shared_ptr<const UserStore> users, Bytes decoy_secret)
    : users_(std::move(users)), decoy_secret_(std::move(decoy_secret)) {}

std::expected<ServerStep, AuthFailure> PlainServer::evaluate(ByteView response) {
  if (step_ != Step::kStart) {
    step_ = Step::kDone;
    return std::unexpected(failure(AuthFailureReason::kProtocol, "a message after the exchange ended"));
  }
  step_ = Step::kDone;  // until the token is accepted
  auto token = parse_plain_token(response);
  if (!token) return std::unexpected(token.error());
  user_ = token->authcid;
  if (!token->authzid.empty() && token->authzid != token->authcid) {
    return std::unexpected(
        failure(AuthFailureReason::kMalformed, "the authorization id differs from the user name (not supported)"));
  }
  const auto it = users_->find(token->authcid);
  known_user_ = it != users_->end() && it->second.plain.has_value();
  PlainCredential credential = known_user_ ? *it->second.plain : decoy_plain_credential(decoy_secret_, token->authcid);
  step_ = Step::kChecking;
  ServerStep out;
  out.slow_check = [credential = std::move(credential), password = std::move(token->password)] {
    return verify_plain_password(credential, password);
  };
  return out;
}

std::expected<ServerStep, AuthFailure> PlainServer::conclude(bool passed) {
  if (step_ != Step::kChecking) {
    step_ = Step::kDone;
    return std::unexpected(failure(AuthFailureReason::kProtocol, "no password check to conclude"));
  }
  step_ = Step::kDone;
  if (!known_user_) {
    return std::unexpected(failure(AuthFailureReason::kUnknownUser, "no such user with PLAIN credentials"));
  }
  if (!passed) return std::unexpected(failure(AuthFailureReason::kBadPassword, "wrong password"));
  return ServerStep{Bytes{}, true, {}};
}

}  // namespace pp::sasl
