#include "proxy/frontend/sasl_handler.h"

#include <algorithm>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "proxy/frontend/log.h"
#include "proxy/frontend/login_throttle.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/sasl_authenticate.h"
#include "proxy/protocol/messages/sasl_handshake.h"

namespace pp {
namespace {

// The label of a mechanism a client named: one the listener offers, else
// "none" (the name is the peer's bytes: not a label, not a log line).
std::string_view offered_label(const FrontendContext& ctx, std::string_view name) {
  const auto& offered = ctx.config.sasl_mechanisms;
  const auto it = std::find(offered.begin(), offered.end(), name);
  return it == offered.end() ? std::string_view("none") : std::string_view(*it);
}

// At most 32 bytes of a peer's string, unprintable bytes as '?'.
std::string shown(std::string_view text) {
  std::string out(text.substr(0, 32));
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c < 0x20 || c > 0x7E; }, '?');
  return text.size() > 32 ? out + "..." : out;
}

void count(FrontendContext& ctx, std::string_view mechanism, std::string_view result) {
  ++(result == "success" ? ctx.counters.authentication_successes_total : ctx.counters.authentication_failures_total);
  ctx.observer.on_authentication(mechanism, result);
}

// Kafka's words for the client: the reason in the log line is ours alone.
std::string client_message(sasl::AuthFailureReason reason) {
  switch (reason) {
    case sasl::AuthFailureReason::kUnknownUser:
    case sasl::AuthFailureReason::kBadPassword:
      return "Authentication failed: Invalid username or password";
    case sasl::AuthFailureReason::kUnsupportedMechanism:
      return "Unsupported SASL mechanism";
    case sasl::AuthFailureReason::kMalformed:
      return "Authentication failed: malformed SASL message";
    case sasl::AuthFailureReason::kProtocol:
      break;
  }
  return "Authentication failed: unexpected SASL message";
}

Bytes raw_frame(const Bytes& token) {
  Bytes out(4 + token.size());
  const auto size = static_cast<std::uint32_t>(token.size());
  out[0] = static_cast<std::uint8_t>(size >> 24);
  out[1] = static_cast<std::uint8_t>(size >> 16);
  out[2] = static_cast<std::uint8_t>(size >> 8);
  out[3] = static_cast<std::uint8_t>(size);
  std::copy(token.begin(), token.end(), out.begin() + 4);
  return out;
}

// A failed login: counted, logged (rate-limited), and answered with
// `answer` (empty: nothing, for raw tokens) after the peer address's delay;
// the connection reads nothing more and closes once that is written.
void fail_login(ClientSession& session, std::string_view mechanism, std::string user, sasl::AuthFailure failure,
                Bytes answer) {
  FrontendContext& ctx = session.context();
  session.auth().fail();
  count(ctx, mechanism, sasl::to_string(failure.reason));
  const std::uint64_t now = uv_now(ctx.loop);
  const std::uint64_t delay = ctx.login_throttle.record_failure(peer_address(session.peer()), now);
  if (const auto held_back = ctx.auth_failure_log.admit(now)) {
    frontend::log().warn(
        "client authentication failed: peer {}, user '{}', mechanism {}, reason {} ({}); answered after {} ms, "
        "connection closed ({} more failures since the last line)",
        session.peer(), user, mechanism, sasl::to_string(failure.reason), failure.detail, delay, *held_back);
  }
  ResponseSlot slot = session.reserve_response();
  session.finish_then_close();
  net::Timer& timer = session.auth().failure_timer();
  timer = net::Timer(ctx.loop);
  timer.start(delay, 0, [slot, answer = std::move(answer)]() mutable { slot.send(std::move(answer)); });
}

// `user` by value: the caller passes the mechanism's own name, which complete() frees.
void succeed(ClientSession& session, std::string_view mechanism,
             std::string user) {  // NOLINT(performance-unnecessary-value-param): outlives the mechanism
  FrontendContext& ctx = session.context();
  const bool first = !session.auth().authenticated();
  if (!first && user != session.auth().user()) {
    fail_login(session, mechanism, user,
               {sasl::AuthFailureReason::kProtocol, "re-authentication as another user than " + session.auth().user()},
               {});
    return;
  }
  session.auth().complete(user, uv_now(ctx.loop), ctx.config.sasl_session_lifetime_ms);
  count(ctx, mechanism, "success");
  if (first) {
    session.lift_unauthenticated_frame_limit();
    session.set_principal(Principal::sasl(std::string(mechanism), user));
  }
}

SaslAuthenticateResponse authenticate_failure(const sasl::AuthFailure& failure) {
  SaslAuthenticateResponse response;
  response.error_code = failure.reason == sasl::AuthFailureReason::kProtocol ? ErrorCode::kIllegalSaslState
                                                                             : ErrorCode::kSaslAuthenticationFailed;
  response.error_message = client_message(failure.reason);
  return response;
}

using StepResult = std::expected<sasl::ServerStep, sasl::AuthFailure>;
using StepAnswer = std::function<void(ClientSession&, StepResult)>;

// `step` as the mechanism evaluated it, answered by `answer`. A step that
// waits on a slow check (PLAIN's PBKDF2) has it run on the pool
// (PasswordChecks) while the session takes no further request; the mechanism
// concludes it and `answer` runs on the loop once it is back, if the
// connection is still open (else the result is dropped with the session).
void conclude_step(ClientSession& session, StepResult step, StepAnswer answer) {
  if (!step || !step->slow_check) {
    answer(session, std::move(step));
    return;
  }
  session.auth().set_checking(true);
  session.context().password_checks.submit(
      std::move(step->slow_check),
      [weak = session.weak_from_this(), answer = std::move(answer)](std::optional<bool> passed) {
        const std::shared_ptr<ClientSession> self = weak.lock();
        if (!self || self->closed()) return;
        ClientAuth& auth = self->auth();
        auth.set_checking(false);
        sasl::ServerMechanism* mechanism = auth.mechanism();
        if (mechanism == nullptr) return;
        answer(*self, passed ? mechanism->conclude(*passed)
                             : StepResult(std::unexpected(sasl::AuthFailure{sasl::AuthFailureReason::kProtocol,
                                                                            "the password check was cancelled"})));
        self->update_reading();
      });
}

// The user the exchange in progress named (copied: a failure or completion
// frees the mechanism).
std::string exchange_user(ClientSession& session) {
  const sasl::ServerMechanism* mechanism = session.auth().mechanism();
  return mechanism == nullptr ? std::string() : mechanism->user();
}

void answer_authenticate(ClientSession& session, std::int32_t correlation_id, std::int16_t version,
                         const std::string& name, StepResult step) {
  if (!step) {
    fail_login(session, name, exchange_user(session), step.error(),
               encode_response_frame(correlation_id, version, authenticate_failure(step.error())));
    return;
  }
  SaslAuthenticateResponse response;
  response.error_message = std::nullopt;
  response.auth_bytes = std::move(step->challenge);
  if (step->complete) {
    succeed(session, name, exchange_user(session));
    if (session.auth().stage() == ClientAuth::Stage::kFailed) return;
    response.session_lifetime_ms = session.context().config.sasl_session_lifetime_ms;
  }
  session.reserve_response().send(encode_response_frame(correlation_id, version, response));
}

void answer_raw_token(ClientSession& session, const std::string& name, std::size_t token_bytes, StepResult step) {
  if (!step) {
    fail_login(session, name, exchange_user(session), step.error(), {});
    return;
  }
  frontend::log().debug("{}: {} raw SASL token of {} bytes, {}", session.describe(), name, token_bytes,
                        step->complete ? "exchange complete" : "answered with a challenge");
  Bytes answer = raw_frame(step->challenge);
  if (step->complete) {
    succeed(session, name, exchange_user(session));
    if (session.auth().stage() == ClientAuth::Stage::kFailed) return;
  }
  session.reserve_response().send(std::move(answer));
}

}  // namespace

bool admit_request(ClientSession& session, const RequestHeader& h) {
  const ClientAuth& auth = session.auth();
  if (!auth.required()) return true;
  const bool sasl_api = h.api_key == ApiKey::kSaslHandshake || h.api_key == ApiKey::kSaslAuthenticate;
  if (sasl_api || (h.api_key == ApiKey::kApiVersions && !auth.authenticated())) return true;
  if (!auth.admitted()) {
    session.close_after_pending(std::string(api_name(h.api_key)) +
                                " before SASL authentication: only ApiVersions, SaslHandshake and SaslAuthenticate "
                                "are served until then");
    return false;
  }
  if (auth.expired(uv_now(session.context().loop))) {
    session.close_after_pending(
        "its SASL session expired (listener.sasl.session_lifetime_ms) without "
        "re-authentication (KIP-368)");
    return false;
  }
  return true;
}

void handle_sasl_handshake(ClientSession& session, const RequestHeader& h, WireReader& r) {
  FrontendContext& ctx = session.context();
  auto request = decode_body<SaslHandshakeRequest>(r, h.api_version);
  if (!request) {
    session.close_after_pending("malformed SaslHandshake: " + request.error().describe());
    return;
  }
  SaslHandshakeResponse response;
  response.mechanisms = ctx.config.sasl_mechanisms;
  ClientAuth& auth = session.auth();
  const bool reauthentication = auth.authenticated() && h.api_version >= 1 && auth.stage() == ClientAuth::Stage::kNone;
  const std::string_view label = offered_label(ctx, request->mechanism);
  if (!auth.required() || (auth.stage() != ClientAuth::Stage::kNone) || (auth.authenticated() && !reauthentication) ||
      (reauthentication && label != session.principal().mechanism())) {
    // Kafka's answer outside a SASL exchange (KafkaApis: a channel that is
    // not SASL, or already authenticated and not re-authenticating).
    response.error_code = ErrorCode::kIllegalSaslState;
    session.reserve_response().send(encode_response_frame(h.correlation_id, h.api_version, response));
    if (auth.required()) session.close_after_pending("SaslHandshake out of turn");
    return;
  }
  if (label == "none") {
    response.error_code = ErrorCode::kUnsupportedSaslMechanism;
    fail_login(session, label, "",
               {sasl::AuthFailureReason::kUnsupportedMechanism,
                "SaslHandshake named mechanism '" + shown(request->mechanism) + "', which is not enabled"},
               encode_response_frame(h.correlation_id, h.api_version, response));
    return;
  }
  auth.begin(sasl::make_server_mechanism(label, ctx.users, ctx.sasl_decoy_secret), h.api_version == 0);
  session.reserve_response().send(encode_response_frame(h.correlation_id, h.api_version, response));
}

void handle_sasl_authenticate(ClientSession& session, const RequestHeader& h, WireReader& r) {
  ClientAuth& auth = session.auth();
  auto request = decode_body<SaslAuthenticateRequest>(r, h.api_version);
  if (!request) {
    session.close_after_pending("malformed SaslAuthenticate: " + request.error().describe());
    return;
  }
  sasl::ServerMechanism* mechanism = auth.mechanism();
  if (!auth.required() || auth.stage() != ClientAuth::Stage::kAuthenticate || mechanism == nullptr) {
    SaslAuthenticateResponse response;
    response.error_code = ErrorCode::kIllegalSaslState;
    response.error_message = "SaslAuthenticate without a SaslHandshake v1 before it";
    session.reserve_response().send(encode_response_frame(h.correlation_id, h.api_version, response));
    if (auth.required()) session.close_after_pending("SaslAuthenticate out of turn");
    return;
  }
  const std::string name(mechanism->name());  // copies: a failure or completion frees the mechanism
  conclude_step(session, mechanism->evaluate(request->auth_bytes),
                [correlation_id = h.correlation_id, version = h.api_version, name](ClientSession& s, StepResult step) {
                  answer_authenticate(s, correlation_id, version, name, std::move(step));
                });
}

void handle_raw_sasl_token(ClientSession& session, const FrameBuffer& frame) {
  ClientAuth& auth = session.auth();
  sasl::ServerMechanism* mechanism = auth.mechanism();
  if (mechanism == nullptr) return;
  const std::string name(mechanism->name());  // copies: a failure or completion frees the mechanism
  conclude_step(session, mechanism->evaluate(ByteView(frame.data(), frame.size())),
                [name, size = frame.size()](ClientSession& s, StepResult step) {
                  answer_raw_token(s, name, size, std::move(step));
                });
}

void note_abandoned_login(ClientSession& session) {
  ClientAuth& auth = session.auth();
  const sasl::ServerMechanism* mechanism = auth.mechanism();
  const bool under_way =
      auth.stage() == ClientAuth::Stage::kRawTokens || auth.stage() == ClientAuth::Stage::kAuthenticate;
  if (mechanism == nullptr || !under_way) return;
  FrontendContext& ctx = session.context();
  const std::string name(mechanism->name());  // copies: fail() frees the mechanism
  const std::string user = mechanism->user();
  const bool checking = auth.checking();
  auth.fail();
  if (ctx.stopped) return;  // the front end closes it: not the client's doing
  count(ctx, name, "abandoned");
  // A failure of the peer's address for its slow-down: hanging up before the
  // delayed answer does not spare the next login from that address its wait.
  const std::uint64_t now = uv_now(ctx.loop);
  ctx.login_throttle.record_failure(peer_address(session.peer()), now);
  if (const auto held_back = ctx.auth_failure_log.admit(now)) {
    frontend::log().warn(
        "client authentication abandoned: peer {}, user '{}', mechanism {}: the connection closed {} ({} more "
        "failures since the last line)",
        session.peer(), shown(user), name, checking ? "during the password check" : "before the exchange concluded",
        *held_back);
  }
}

}  // namespace pp
