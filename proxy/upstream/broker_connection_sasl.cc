// BrokerConnection: SASL authentication after ApiVersions (KIP-43 handshake,
// KIP-152 SaslAuthenticate), and KIP-368 re-authentication on the same
// connection. Failures close the session with one log line naming the broker
// and the reason, are counted by reason, and reconnect with the usual backoff.
// No secret reaches a log line: the mechanisms' errors never hold one, and
// auth_bytes are never logged.
#include <algorithm>
#include <chrono>
#include <random>

#include "proxy/protocol/header.h"
#include "proxy/upstream/broker_connection.h"
#include "proxy/upstream/log.h"

namespace pp::upstream {
namespace {

// The metric labels of upstream_auth_failures_total (docs/design/INTERFACES.md).
constexpr std::string_view kReasonMechanism = "sasl_mechanism";            // handshake refused the mechanism
constexpr std::string_view kReasonAuthentication = "sasl_authentication";  // the broker refused the credentials
constexpr std::string_view kReasonServer = "sasl_server";  // the broker's SASL messages failed our checks
constexpr std::string_view kReasonToken = "sasl_token";    // no OAUTHBEARER token could be obtained

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void BrokerConnection::begin_authentication(bool reauth) {
  state_ = State::kAuthenticating;
  reauth_ = reauth;
  reauth_due_ = false;
  reauth_timer_.stop();
  const auto handshake = versions_.version(ApiKey::kSaslHandshake);
  if (!handshake || *handshake < 1 || !versions_.version(ApiKey::kSaslAuthenticate)) {
    // v0 sends the tokens without Kafka framing (KIP-43); every broker since
    // 1.0 speaks v1, so v0 is not implemented.
    authentication_failed(kReasonMechanism, "the broker does not offer SaslHandshake v1 and SaslAuthenticate");
    return;
  }
  if (options_.sasl->token_command_due(unix_now_ms())) {
    run_token_command();
    return;
  }
  send_sasl_handshake();
}

// The token helper may take seconds (an OIDC round trip, MSK IAM signing):
// it runs as a child process watched by the loop, so every other connection
// and client is served meanwhile; this one waits in kAuthenticating, sending
// nothing, and goes on when the token arrives.
void BrokerConnection::run_token_command() {
  log().debug("{}: running the OAUTHBEARER token_command {}", describe(), options_.sasl->token_command().front());
  const std::uint64_t session = session_;
  std::weak_ptr<BrokerConnection*> weak = self_;
  token_command_.start(loop_, options_.sasl->token_command(), options_.sasl->token_command_timeout_ms(),
                       sasl::kMaxTokenCommandOutput, [weak, session](std::expected<std::string, std::string> output) {
                         if (auto owner = weak.lock()) (*owner)->on_token_command(session, std::move(output));
                       });
}

void BrokerConnection::on_token_command(std::uint64_t session, std::expected<std::string, std::string> output) {
  if (session != session_ || state_ != State::kAuthenticating) return;
  auto ready = options_.sasl->token_command_finished(std::move(output), unix_now_ms());
  if (!ready) {
    authentication_failed(kReasonToken, ready.error().reason);
    return;
  }
  send_sasl_handshake();
}

void BrokerConnection::send_sasl_handshake() {
  auto mechanism = options_.sasl->begin(unix_now_ms());
  if (!mechanism) {
    authentication_failed(kReasonToken, mechanism.error().reason);
    return;
  }
  mechanism_ = std::move(*mechanism);
  log().debug("{}: {}SaslHandshake v1 ({})", describe(), reauth_ ? "re-authenticating: " : "", mechanism_->name());
  SaslHandshakeRequest request;
  request.mechanism = std::string(mechanism_->name());
  RequestHeader header{ApiKey::kSaslHandshake, 1, next_correlation_id_, options_.client_id, {}};
  const std::uint64_t session = session_;
  std::weak_ptr<BrokerConnection*> weak = self_;
  enqueue(ApiKey::kSaslHandshake, 1, encode_request_wire_frame(header, request),
          make_sink<SaslHandshakeResponse>([weak, session](std::expected<SaslHandshakeResponse, ErrorCode> r) {
            if (auto owner = weak.lock()) (*owner)->on_sasl_handshake(session, std::move(r));
          }));
}

void BrokerConnection::on_sasl_handshake(std::uint64_t session,
                                         std::expected<SaslHandshakeResponse, ErrorCode> result) {
  // A failure here is the session closing, which already dealt with it.
  if (session != session_ || state_ != State::kAuthenticating || !result) return;
  if (result->error_code != ErrorCode::kNone) {
    std::string enabled;
    for (const std::string& m : result->mechanisms) enabled += (enabled.empty() ? "" : ",") + m;
    authentication_failed(kReasonMechanism, "SaslHandshake answered " + std::string(error_name(result->error_code)) +
                                                " for " + std::string(mechanism_->name()) + " (the broker enables [" +
                                                enabled + "])");
    return;
  }
  auto first = mechanism_->initial_response();
  if (!first) {
    authentication_failed(kReasonAuthentication, first.error().reason);
    return;
  }
  send_sasl_authenticate(std::move(*first));
}

void BrokerConnection::send_sasl_authenticate(Bytes auth_bytes) {
  // v1+ carries session_lifetime_ms (KIP-368), v2 is flexible; the highest both speak.
  const std::int16_t version = versions_.version(ApiKey::kSaslAuthenticate).value_or(0);
  SaslAuthenticateRequest request;
  request.auth_bytes = std::move(auth_bytes);
  RequestHeader header{ApiKey::kSaslAuthenticate, version, next_correlation_id_, options_.client_id, {}};
  const std::uint64_t session = session_;
  std::weak_ptr<BrokerConnection*> weak = self_;
  enqueue(ApiKey::kSaslAuthenticate, version, encode_request_wire_frame(header, request),
          make_sink<SaslAuthenticateResponse>([weak, session](std::expected<SaslAuthenticateResponse, ErrorCode> r) {
            if (auto owner = weak.lock()) (*owner)->on_sasl_authenticate(session, std::move(r));
          }));
}

void BrokerConnection::on_sasl_authenticate(std::uint64_t session,
                                            std::expected<SaslAuthenticateResponse, ErrorCode> result) {
  if (session != session_ || state_ != State::kAuthenticating || !result) return;
  if (result->error_code != ErrorCode::kNone) {
    // The broker's message names the cause ("Authentication failed: Invalid
    // username or password"); it carries no secret of ours.
    const std::string message = result->error_message.value_or("");
    authentication_failed(kReasonAuthentication, "SaslAuthenticate answered " +
                                                     std::string(error_name(result->error_code)) +
                                                     (message.empty() ? "" : ": " + message.substr(0, 200)));
    return;
  }
  auto next = mechanism_->evaluate(result->auth_bytes);
  if (!next) {
    authentication_failed(kReasonServer, next.error().reason);
    return;
  }
  if (*next) {
    send_sasl_authenticate(std::move(**next));
    return;
  }
  authenticated(result->session_lifetime_ms);
}

void BrokerConnection::authenticated(std::int64_t session_lifetime_ms) {
  const std::string mechanism(mechanism_->name());
  mechanism_.reset();
  if (session_lifetime_ms > 0) schedule_reauthentication(session_lifetime_ms);
  if (reauth_) {
    ++reauthentications_;
    log().info("{}: re-authenticated with SASL {} (session lifetime {} ms)", describe(), mechanism,
               session_lifetime_ms);
    if (options_.on_reauthenticated) options_.on_reauthenticated(node_id_);
  } else {
    log().debug("{}: authenticated with SASL {} (session lifetime {} ms)", describe(), mechanism, session_lifetime_ms);
  }
  become_ready();
}

void BrokerConnection::authentication_failed(std::string_view metric_reason, const std::string& why) {
  const std::string mechanism = options_.sasl->mechanism();
  mechanism_.reset();
  report_auth_failure(metric_reason);
  close_session("SASL " + mechanism + " authentication failed (" + std::string(metric_reason) + "): " + why,
                Cause::kAuthentication);
}

// Java's client re-authenticates at 0.85 to 0.95 of the lifetime, jittered so
// the connections to one broker don't all re-authenticate together (KIP-368).
void BrokerConnection::schedule_reauthentication(std::int64_t session_lifetime_ms) {
  static thread_local std::minstd_rand random{std::random_device{}()};
  std::uniform_real_distribution<double> share(0.85, 0.95);
  const auto delay = static_cast<std::uint64_t>(static_cast<double>(session_lifetime_ms) * share(random));
  const std::uint64_t session = session_;
  reauth_timer_.start(delay, 0, [this, session] {
    if (session != session_ || state_ != State::kReady) return;
    log().debug("{}: session lifetime nearly over; re-authenticating once {} requests finish", describe(), in_flight());
    reauth_due_ = true;
    maybe_start_reauthentication();
  });
}

// A closed session ends any exchange and any planned re-authentication.
void BrokerConnection::reset_authentication() {
  token_command_.stop();
  mechanism_.reset();
  reauth_ = false;
  reauth_due_ = false;
  reauth_timer_.stop();
}

void BrokerConnection::maybe_start_reauthentication() {
  if (reauth_due_ && state_ == State::kReady && in_flight() == 0) begin_authentication(/*reauth=*/true);
}

}  // namespace pp::upstream
