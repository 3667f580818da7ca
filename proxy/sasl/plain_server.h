// PLAIN's server side (RFC 4616): one message, "authzid NUL authcid NUL
// passwd", checked against the user's salted PBKDF2 hash. As Kafka's
// PlainSaslServer: the authzid must be empty or the authcid itself; the
// answer on success is an empty challenge.
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
  explicit PlainServer(std::shared_ptr<const UserStore> users);

  std::string_view name() const override { return kPlain; }
  std::expected<ServerStep, AuthFailure> evaluate(ByteView response) override;
  const std::string& user() const override { return user_; }

 private:
  std::shared_ptr<const UserStore> users_;
  std::string user_;
  bool done_ = false;
};

}  // namespace pp::sasl
