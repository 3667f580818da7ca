// SCRAM-SHA-256 and SCRAM-SHA-512 server (RFC 5802, RFC 7677), as Kafka's
// ScramSaslServer speaks them: no channel binding (gs2 flag "n", or "y"
// since no -PLUS variant is offered), an authzid only if it is the user
// itself, extensions ignored except Kafka's "tokenauth" (delegation tokens
// are not served). Two client messages:
//   client-first  -> server-first (r=client+server nonce, s=salt, i=count)
//   client-final  -> the proof verified against StoredKey, then
//                    server-final (v=ServerSignature), complete.
// An unknown user (or one without this mechanism's credentials) is answered
// at client-first like a known one, with a decoy salt and iteration count
// (decoy_credentials.h), and fails at client-final as kUnknownUser after the
// same work a wrong proof costs: the server-first-message does not tell which
// names exist. The server nonce is 24 bytes of RAND_bytes in base64. Parsing is strict and linear; every
// failure names what was wrong, never a proof or key.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/sasl/server_mechanism.h"

namespace pp::sasl {

struct ClientFirst {
  std::string gs2_header;  // "n,," or "n,a=user," (what c= must repeat)
  std::string user;        // the saslname decoded ("=2C" -> ',', "=3D" -> '=')
  std::string nonce;
  std::string bare;  // client-first-message-bare, for AuthMessage
};

struct ClientFinal {
  std::string channel_binding;  // c=, decoded
  std::string nonce;
  Bytes proof;
  std::string without_proof;  // client-final-message-without-proof, for AuthMessage
};

std::expected<ClientFirst, AuthFailure> parse_client_first(std::string_view message);
std::expected<ClientFinal, AuthFailure> parse_client_final(std::string_view message);

class ScramServer final : public ServerMechanism {
 public:
  // `decoy_secret`, `server_nonce`: see make_server_mechanism.
  ScramServer(ScramHash hash, std::shared_ptr<const UserStore> users, Bytes decoy_secret = {},
              std::string server_nonce = {});

  std::string_view name() const override { return scram_mechanism_name(hash_); }
  std::expected<ServerStep, AuthFailure> evaluate(ByteView response) override;
  const std::string& user() const override { return user_; }

 private:
  enum class Step : std::uint8_t { kStart, kSentFirst, kDone };
  std::expected<ServerStep, AuthFailure> server_first(std::string_view client_first);
  std::expected<ServerStep, AuthFailure> server_final(std::string_view client_final);
  const ScramCredential* credential() const;

  ScramHash hash_;
  std::shared_ptr<const UserStore> users_;
  Bytes decoy_secret_;
  std::optional<ScramCredential> decoy_;  // set when user_ has no credential here
  std::string server_nonce_;
  Step step_ = Step::kStart;
  std::string user_;
  std::string gs2_header_;
  std::string nonce_;  // client + server
  std::string client_first_bare_;
  std::string server_first_;
};

}  // namespace pp::sasl
