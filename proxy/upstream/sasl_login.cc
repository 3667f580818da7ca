#include "proxy/upstream/sasl_login.h"

#include <chrono>
#include <random>
#include <utility>

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

SaslLogin::SaslLogin(uv_loop_t* loop, std::shared_ptr<sasl::Authenticator> authenticator, std::string peer,
                     const NegotiatedVersions& versions, Connection& connection)
    : loop_(loop),
      authenticator_(std::move(authenticator)),
      peer_(std::move(peer)),
      versions_(versions),
      connection_(connection),
      self_(std::make_shared<SaslLogin*>(this)),
      reauth_timer_(loop) {}

SaslLogin::~SaslLogin() {
  self_.reset();  // callbacks already posted see we are gone
}

void SaslLogin::begin(bool reauth) {
  ++exchange_;
  running_ = true;
  reauth_ = reauth;
  due_ = false;
  reauth_timer_.stop();
  const auto handshake = versions_.version(ApiKey::kSaslHandshake);
  if (!handshake || *handshake < 1 || !versions_.version(ApiKey::kSaslAuthenticate)) {
    // v0 sends the tokens without Kafka framing (KIP-43); every broker since
    // 1.0 speaks v1, so v0 is not implemented.
    failed(kReasonMechanism, "the broker does not offer SaslHandshake v1 and SaslAuthenticate");
    return;
  }
  if (authenticator_->token_command_due(unix_now_ms())) {
    run_token_command();
    return;
  }
  send_handshake();
}

void SaslLogin::reset() {
  ++exchange_;
  running_ = false;
  reauth_ = false;
  due_ = false;
  token_command_.stop();
  mechanism_.reset();
  reauth_timer_.stop();
}

// The token helper may take seconds (an OIDC round trip, MSK IAM signing):
// it runs as a child process watched by the loop, so every other connection
// and client is served meanwhile; this one waits in kAuthenticating, sending
// nothing, and goes on when the token arrives.
void SaslLogin::run_token_command() {
  log().debug("{}: running the OAUTHBEARER token_command {}", peer_, authenticator_->token_command().front());
  const std::uint64_t exchange = exchange_;
  std::weak_ptr<SaslLogin*> weak = self_;
  token_command_.start(loop_, authenticator_->token_command(), authenticator_->token_command_timeout_ms(),
                       sasl::kMaxTokenCommandOutput, [weak, exchange](std::expected<std::string, std::string> output) {
                         if (auto owner = weak.lock()) (*owner)->on_token_command(exchange, std::move(output));
                       });
}

void SaslLogin::on_token_command(std::uint64_t exchange, std::expected<std::string, std::string> output) {
  if (!current(exchange)) return;
  auto ready = authenticator_->token_command_finished(std::move(output), unix_now_ms());
  if (!ready) {
    failed(kReasonToken, ready.error().reason);
    return;
  }
  send_handshake();
}

void SaslLogin::send_handshake() {
  auto mechanism = authenticator_->begin(unix_now_ms());
  if (!mechanism) {
    failed(kReasonToken, mechanism.error().reason);
    return;
  }
  mechanism_ = std::move(*mechanism);
  log().debug("{}: {}SaslHandshake v1 ({})", peer_, reauth_ ? "re-authenticating: " : "", mechanism_->name());
  SaslHandshakeRequest request;
  request.mechanism = std::string(mechanism_->name());
  const std::uint64_t exchange = exchange_;
  std::weak_ptr<SaslLogin*> weak = self_;
  connection_.send_login(
      request, make_sink<SaslHandshakeResponse>([weak, exchange](std::expected<SaslHandshakeResponse, ErrorCode> r) {
        if (auto owner = weak.lock()) (*owner)->on_handshake(exchange, std::move(r));
      }));
}

void SaslLogin::on_handshake(std::uint64_t exchange, std::expected<SaslHandshakeResponse, ErrorCode> result) {
  // A failure here is the session closing, which already dealt with it.
  if (!current(exchange) || !result) return;
  if (result->error_code != ErrorCode::kNone) {
    std::string enabled;
    for (const std::string& m : result->mechanisms) enabled += (enabled.empty() ? "" : ",") + m;
    failed(kReasonMechanism, "SaslHandshake answered " + std::string(error_name(result->error_code)) + " for " +
                                 std::string(mechanism_->name()) + " (the broker enables [" + enabled + "])");
    return;
  }
  auto first = mechanism_->initial_response();
  if (!first) {
    failed(kReasonAuthentication, first.error().reason);
    return;
  }
  send_authenticate(std::move(*first));
}

void SaslLogin::send_authenticate(Bytes auth_bytes) {
  // v1+ carries session_lifetime_ms (KIP-368), v2 is flexible; the highest both speak.
  const std::int16_t version = versions_.version(ApiKey::kSaslAuthenticate).value_or(0);
  SaslAuthenticateRequest request;
  request.auth_bytes = std::move(auth_bytes);
  const std::uint64_t exchange = exchange_;
  std::weak_ptr<SaslLogin*> weak = self_;
  connection_.send_login(
      request, version,
      make_sink<SaslAuthenticateResponse>([weak, exchange](std::expected<SaslAuthenticateResponse, ErrorCode> r) {
        if (auto owner = weak.lock()) (*owner)->on_authenticate(exchange, std::move(r));
      }));
}

void SaslLogin::on_authenticate(std::uint64_t exchange, std::expected<SaslAuthenticateResponse, ErrorCode> result) {
  if (!current(exchange) || !result) return;
  if (result->error_code != ErrorCode::kNone) {
    // The broker's message names the cause ("Authentication failed: Invalid
    // username or password"); it carries no secret of ours.
    const std::string message = result->error_message.value_or("");
    failed(kReasonAuthentication, "SaslAuthenticate answered " + std::string(error_name(result->error_code)) +
                                      (message.empty() ? "" : ": " + message.substr(0, 200)));
    return;
  }
  auto next = mechanism_->evaluate(result->auth_bytes);
  if (!next) {
    failed(kReasonServer, next.error().reason);
    return;
  }
  if (*next) {
    send_authenticate(std::move(**next));
    return;
  }
  succeeded(result->session_lifetime_ms);
}

void SaslLogin::succeeded(std::int64_t session_lifetime_ms) {
  const std::string mechanism(mechanism_->name());
  mechanism_.reset();
  running_ = false;
  const bool reauth = std::exchange(reauth_, false);
  if (session_lifetime_ms > 0) schedule_reauthentication(session_lifetime_ms);
  if (reauth) {
    ++reauthentications_;
    log().info("{}: re-authenticated with SASL {} (session lifetime {} ms)", peer_, mechanism, session_lifetime_ms);
  } else {
    log().debug("{}: authenticated with SASL {} (session lifetime {} ms)", peer_, mechanism, session_lifetime_ms);
  }
  connection_.login_succeeded(reauth);
}

void SaslLogin::failed(std::string_view metric_reason, const std::string& why) {
  const std::string mechanism = authenticator_->mechanism();
  mechanism_.reset();
  running_ = false;
  reauth_ = false;
  connection_.login_failed(metric_reason,
                           "SASL " + mechanism + " authentication failed (" + std::string(metric_reason) + "): " + why);
}

// Java's client re-authenticates at 0.85 to 0.95 of the lifetime, jittered so
// the connections to one broker don't all re-authenticate together (KIP-368).
void SaslLogin::schedule_reauthentication(std::int64_t session_lifetime_ms) {
  static thread_local std::minstd_rand random{std::random_device{}()};
  std::uniform_real_distribution<double> share(0.85, 0.95);
  const auto delay = static_cast<std::uint64_t>(static_cast<double>(session_lifetime_ms) * share(random));
  const std::uint64_t exchange = exchange_;
  reauth_timer_.start(delay, 0, [this, exchange] {
    if (running_ || exchange != exchange_) return;
    due_ = true;
    connection_.reauthentication_due();
  });
}

}  // namespace pp::upstream
