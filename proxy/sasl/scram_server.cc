#include "proxy/sasl/scram_server.h"

#include <algorithm>
#include <vector>

#include "proxy/sasl/base64.h"
#include "proxy/sasl/decoy_credentials.h"
#include "proxy/sasl/scram_attributes.h"
#include "proxy/sasl/scram_crypto.h"

namespace pp::sasl {
namespace {

constexpr std::size_t kServerNonceBytes = 24;

AuthFailure failure(AuthFailureReason reason, std::string detail) {
  return AuthFailure{reason, "SCRAM: " + std::move(detail)};
}
AuthFailure malformed(std::string detail) {
  return failure(AuthFailureReason::kMalformed, std::move(detail));
}

// RFC 5802 section 7: printable ASCII except ','.
bool valid_nonce(std::string_view nonce) {
  return !nonce.empty() && std::all_of(nonce.begin(), nonce.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
}

// saslname: "=2C" for ',', "=3D" for '='; any other '=' is malformed.
std::optional<std::string> decode_saslname(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '=') {
      out += name[i];
      continue;
    }
    const std::string_view code = name.substr(i + 1, 2);
    if (code == "2C") {
      out += ',';
    } else if (code == "3D") {
      out += '=';
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  return out;
}

// Extensions after the mandatory attributes: "key=value", key alphanumeric.
// Kafka's "tokenauth=true" asks for a delegation token, which is not served.
std::optional<AuthFailure> check_extensions(const std::vector<std::string_view>& attrs, std::size_t from) {
  for (std::size_t i = from; i < attrs.size(); ++i) {
    const std::string_view a = attrs[i];
    const std::size_t eq = a.find('=');
    const std::string_view key = a.substr(0, eq);
    const bool alnum = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
    if (eq == std::string_view::npos || !alnum) return malformed("malformed extension");
    if (key == "tokenauth" && a.substr(eq + 1) == "true") {
      return failure(AuthFailureReason::kUnknownUser, "delegation tokens are not served");
    }
  }
  return std::nullopt;
}

// gs2-header: gs2-cbind-flag "," [authzid] ",". "p=" (channel binding
// required) is refused: no -PLUS mechanism is offered.
std::expected<std::size_t, AuthFailure> gs2_header_size(std::string_view message) {
  if (!message.starts_with("n,") && !message.starts_with("y,")) {
    return std::unexpected(malformed("client-first-message: channel binding flag is not n or y"));
  }
  const std::size_t second = message.find(',', 2);
  if (second == std::string_view::npos) return std::unexpected(malformed("client-first-message: no gs2 header"));
  const std::string_view authzid = message.substr(2, second - 2);
  if (!authzid.empty() && !authzid.starts_with("a=")) {
    return std::unexpected(malformed("client-first-message: bad authzid"));
  }
  return second + 1;
}

Bytes text_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

}  // namespace

std::expected<ClientFirst, AuthFailure> parse_client_first(std::string_view message) {
  const auto header = gs2_header_size(message);
  if (!header) return std::unexpected(header.error());
  ClientFirst out;
  out.gs2_header = std::string(message.substr(0, *header));
  out.bare = std::string(message.substr(*header));
  const auto attrs = split_attributes(out.bare);
  if (!attrs.empty() && attrs[0].starts_with("m=")) {
    return std::unexpected(malformed("client-first-message demands an unsupported mandatory extension"));
  }
  if (attrs.size() < 2) return std::unexpected(malformed("client-first-message has fewer than 2 attributes"));
  const auto name = attribute(attrs[0], 'n');
  auto user = name ? decode_saslname(*name) : std::nullopt;
  if (!user || !valid_user_name(*user)) return std::unexpected(malformed("client-first-message: bad user name"));
  out.user = std::move(*user);
  const std::string_view authzid = std::string_view(out.gs2_header).substr(2, out.gs2_header.size() - 3);
  if (!authzid.empty() && decode_saslname(authzid.substr(2)) != out.user) {
    return std::unexpected(malformed("client-first-message: the authzid differs from the user name"));
  }
  const auto nonce = attribute(attrs[1], 'r');
  if (!nonce || !valid_nonce(*nonce)) return std::unexpected(malformed("client-first-message: bad nonce"));
  out.nonce = std::string(*nonce);
  if (auto bad = check_extensions(attrs, 2)) return std::unexpected(std::move(*bad));
  return out;
}

std::expected<ClientFinal, AuthFailure> parse_client_final(std::string_view message) {
  const auto attrs = split_attributes(message);
  if (attrs.size() < 3) return std::unexpected(malformed("client-final-message has fewer than 3 attributes"));
  ClientFinal out;
  const auto binding_text = attribute(attrs[0], 'c');
  auto binding = binding_text ? base64_decode(*binding_text) : std::nullopt;
  if (!binding) return std::unexpected(malformed("client-final-message: bad channel binding"));
  out.channel_binding.assign(binding->begin(), binding->end());
  const auto nonce = attribute(attrs[1], 'r');
  if (!nonce || !valid_nonce(*nonce)) return std::unexpected(malformed("client-final-message: bad nonce"));
  out.nonce = std::string(*nonce);
  const auto proof_text = attribute(attrs.back(), 'p');
  auto proof = proof_text ? base64_decode(*proof_text) : std::nullopt;
  if (!proof || proof->empty()) return std::unexpected(malformed("client-final-message: bad proof"));
  out.proof = std::move(*proof);
  // The extensions sit between the nonce and the proof.
  std::vector<std::string_view> middle(attrs.begin(), attrs.end() - 1);
  if (auto bad = check_extensions(middle, 2)) return std::unexpected(std::move(*bad));
  out.without_proof = std::string(message.substr(0, message.size() - attrs.back().size() - 1));
  return out;
}

ScramServer::ScramServer(ScramHash hash, std::shared_ptr<const UserStore> users, Bytes decoy_secret,
                         std::string server_nonce)
    : hash_(hash),
      users_(std::move(users)),
      decoy_secret_(std::move(decoy_secret)),
      server_nonce_(std::move(server_nonce)) {}

std::expected<ServerStep, AuthFailure> ScramServer::evaluate(ByteView response) {
  const std::string_view text(reinterpret_cast<const char*>(response.data()), response.size());
  switch (step_) {
    case Step::kStart:
      return server_first(text);
    case Step::kSentFirst:
      return server_final(text);
    case Step::kDone:
      break;
  }
  return std::unexpected(failure(AuthFailureReason::kProtocol, "a message after the exchange ended"));
}

const ScramCredential* ScramServer::credential() const {
  const auto it = users_->find(user_);
  if (it == users_->end()) return nullptr;
  const auto& slot = hash_ == ScramHash::kSha256 ? it->second.scram_sha256 : it->second.scram_sha512;
  return slot ? &*slot : nullptr;
}

std::expected<ServerStep, AuthFailure> ScramServer::server_first(std::string_view client_first) {
  step_ = Step::kDone;  // until this message is accepted
  auto first = parse_client_first(client_first);
  if (!first) return std::unexpected(first.error());
  user_ = first->user;
  const ScramCredential* cred = credential();
  if (cred == nullptr) {
    decoy_ = decoy_scram_credential(hash_, decoy_secret_, user_);
    cred = &*decoy_;
  }
  if (server_nonce_.empty()) {
    auto random = random_bytes(kServerNonceBytes);
    if (!random) return std::unexpected(failure(AuthFailureReason::kProtocol, "RAND_bytes failed to make a nonce"));
    server_nonce_ = base64_encode(*random);
  }
  gs2_header_ = first->gs2_header;
  nonce_ = first->nonce + server_nonce_;
  client_first_bare_ = first->bare;
  server_first_ = "r=" + nonce_ + ",s=" + base64_encode(cred->salt) + ",i=" + std::to_string(cred->iterations);
  step_ = Step::kSentFirst;
  return ServerStep{text_bytes(server_first_), false};
}

std::expected<ServerStep, AuthFailure> ScramServer::server_final(std::string_view client_final) {
  step_ = Step::kDone;
  auto final_message = parse_client_final(client_final);
  if (!final_message) return std::unexpected(final_message.error());
  if (final_message->channel_binding != gs2_header_) {
    return std::unexpected(malformed("client-final-message: channel binding does not repeat the gs2 header"));
  }
  if (final_message->nonce != nonce_) return std::unexpected(malformed("client-final-message: nonce mismatch"));
  const ScramCredential* cred = decoy_ ? &*decoy_ : credential();
  if (cred == nullptr) {
    return std::unexpected(failure(AuthFailureReason::kUnknownUser, "the user's credentials went away"));
  }
  const std::string auth_message = client_first_bare_ + "," + server_first_ + "," + final_message->without_proof;
  const Bytes client_signature = scram_hmac(hash_, cred->stored_key, text_bytes(auth_message));
  if (final_message->proof.size() != client_signature.size()) {
    return std::unexpected(failure(AuthFailureReason::kBadPassword, "the proof has the wrong length"));
  }
  Bytes client_key(client_signature.size());
  for (std::size_t i = 0; i < client_key.size(); ++i) {
    client_key[i] = static_cast<std::uint8_t>(final_message->proof[i] ^ client_signature[i]);
  }
  const bool verified = constant_time_equal(scram_hash(hash_, client_key), cred->stored_key);
  if (decoy_) {
    return std::unexpected(
        failure(AuthFailureReason::kUnknownUser, "no such user with " + std::string(name()) + " credentials"));
  }
  if (!verified) {
    return std::unexpected(failure(AuthFailureReason::kBadPassword, "the proof does not verify (wrong password)"));
  }
  const Bytes server_signature = scram_hmac(hash_, cred->server_key, text_bytes(auth_message));
  return ServerStep{text_bytes("v=" + base64_encode(server_signature)), true};
}

}  // namespace pp::sasl
