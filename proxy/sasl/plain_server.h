// PLAIN's server side (RFC 4616): one message, "authzid NUL authcid NUL
// passwd", checked against the user's salted PBKDF2 hash. As Kafka's
// PlainSaslServer: the authzid must be empty or the authcid itself; the
// answer on success is an empty challenge.
//
// The PBKDF2 run (its cost set by the users file's iteration count) is left
// to the caller as the step's slow_check, for a thread other than the loop's;
// conclude() then completes or fails the exchange. A user the store does not
// hold (or holds without PLAIN) is checked the same way against a decoy
// credential (decoy_credentials.h), so that neither the answer nor its delay
// tells unknown names from wrong passwords; it fails as kUnknownUser.
#pragma once

#include <memory>
#include <string>

#include "proxy/sasl/server_mechanism.h"

namespace pp::sasl {

struct PlainToken {
  std::string authzid;
  std::string authcid;
  std::string password;
};

// The token split at its two NULs: exactly three fields, authcid and
// password non-empty, authcid a valid user name.
std::expected<PlainToken, AuthFailure> parse_plain_token(ByteView token);

class PlainServer final : public ServerMechanism {
 public:
  // `decoy_secret`: see make_server_mechanism.
  explicit PlainServer(std::shared_ptr<const UserStore> users, Bytes decoy_secret = {});

  std::string_view name() const override { return kPlain; }
  std::expected<ServerStep, AuthFailure> evaluate(ByteView response) override;
  std::expected<ServerStep, AuthFailure> conclude(bool passed) override;
  const std::string& user() const override { return user_; }

 private:
  enum class Step : std::uint8_t { kStart, kChecking, kDone };

  std::shared_ptr<const UserStore> users_;
  Bytes decoy_secret_;
  std::string user_;
  bool known_user_ = false;
  Step step_ = Step::kStart;
};

}  // namespace pp::sasl
