// One SASL mechanism as the client listener's server runs it (RFC 4422
// section 3): each client message evaluated in turn, answered with a
// challenge, until the exchange completes or fails. The front end carries
// the messages (raw after SaslHandshake v0, in SaslAuthenticate after v1)
// and knows nothing of what is in them.
//
//   auto mech = make_server_mechanism("SCRAM-SHA-256", users);
//   on each client message: auto step = mech->evaluate(bytes);
//     error -> authentication failed: step.error().reason for the metric,
//              .detail for the log line (never a secret)
//     step->slow_check -> run it off the loop thread (it holds copies of
//              what it needs), then step = mech->conclude(its result) on
//              the loop thread and go on as below
//     step->complete -> authenticated as mech->user(); send step->challenge
//     otherwise -> send step->challenge, wait for the next message
//
// Pure: no sockets, no clock, no logging ("Codecs are pure functions over byte
// spans", ARCHITECTURE.md, rules of the house), so the parsers of the
// client's messages are unit-tested on RFC vectors and fuzzed.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/sasl/user_credentials.h"

namespace pp::sasl {

// Why a login failed: the `reason` label of the authentication metric.
enum class AuthFailureReason : std::uint8_t {
  kMalformed,             // the client's SASL message does not parse
  kUnknownUser,           // no such user, or none with this mechanism
  kBadPassword,           // the password (PLAIN) or proof (SCRAM) does not verify
  kUnsupportedMechanism,  // SaslHandshake named a mechanism not enabled
  kProtocol,              // a message out of turn, an over-long token, a changed re-authentication
};
std::string_view to_string(AuthFailureReason reason);

struct AuthFailure {
  AuthFailureReason reason = AuthFailureReason::kMalformed;
  // For the log line: what was wrong, never a password, proof or key.
  std::string detail;
};

struct ServerStep {
  Bytes challenge;  // to the client (empty for PLAIN's last)
  bool complete = false;
  // Set when the step's outcome waits on work too slow for the loop thread
  // (PLAIN's PBKDF2 of the password): challenge and complete mean nothing
  // yet. It holds copies of what it needs (nothing of the mechanism or the
  // user store), so it may run on any thread, and the mechanism may be gone
  // by the time it returns. Its result goes to ServerMechanism::conclude.
  std::function<bool()> slow_check;
};

class ServerMechanism {
 public:
  virtual ~ServerMechanism() = default;
  virtual std::string_view name() const = 0;
  virtual std::expected<ServerStep, AuthFailure> evaluate(ByteView response) = 0;
  // The outcome of the step whose slow_check returned `passed`. Only after
  // such a step; otherwise a kProtocol failure.
  virtual std::expected<ServerStep, AuthFailure> conclude(bool passed);
  // The user the client claimed, once a message named one (for the log
  // line of a failure, and the principal once complete); empty before.
  virtual const std::string& user() const = 0;
};

// evaluate(), with a slow_check run in place and concluded: for callers with
// no other thread to run it on (tests, fuzzers, tools).
std::expected<ServerStep, AuthFailure> evaluate_in_place(ServerMechanism& mechanism, ByteView response);

// The server side of `mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) over
// `users`, held for the exchange; null for another name. `decoy_secret`
// keys the stand-in credentials of unknown users (decoy_credentials.h); an
// empty one gives a fixed key (tests). `server_nonce`: empty for a fresh
// random one; tests inject RFC 7677's.
std::unique_ptr<ServerMechanism> make_server_mechanism(std::string_view mechanism,
                                                       std::shared_ptr<const UserStore> users, Bytes decoy_secret = {},
                                                       std::string server_nonce = {});

}  // namespace pp::sasl
