#include "proxy/upstream/broker_connection.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "proxy/protocol/header.h"
#include "proxy/upstream/log.h"

namespace pp::upstream {

namespace {

// KIP-511 client_software_name / _version: [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
constexpr std::string_view kSoftwareName = "produce-proxy";
constexpr std::string_view kSoftwareVersion = "0.1.0";

bool connection_request(ApiKey key) {
  return key == ApiKey::kApiVersions || key == ApiKey::kSaslHandshake || key == ApiKey::kSaslAuthenticate;
}

}  // namespace

std::string_view to_string(BrokerConnection::State state) {
  switch (state) {
    case BrokerConnection::State::kDisconnected:
      return "disconnected";
    case BrokerConnection::State::kConnecting:
      return "connecting";
    case BrokerConnection::State::kNegotiating:
      return "negotiating";
    case BrokerConnection::State::kAuthenticating:
      return "authenticating";
    case BrokerConnection::State::kReady:
      return "ready";
  }
  return "?";
}

// The handshake's own sink: it reports to the connection, not to a caller,
// and needs the KIP-511 v0 fallback when decoding.
class BrokerConnection::ApiVersionsSink final : public ResponseSink {
 public:
  ApiVersionsSink(std::weak_ptr<BrokerConnection*> owner, std::int16_t sent_version)
      : owner_(std::move(owner)), sent_version_(sent_version) {}

  Decoded<std::int32_t> decode(ByteView body, std::int16_t) override {
    auto resp = decode_api_versions_response(body, sent_version_);
    if (!resp) return std::unexpected(resp.error());
    response_ = std::move(*resp);
    return 0;  // nothing else is sent before it, so a throttle here changes nothing
  }
  void deliver() override {
    if (auto owner = owner_.lock()) (*owner)->on_api_versions(*response_, sent_version_);
  }
  void fail(ErrorCode) override {}  // the connection's close already deals with it

 private:
  std::weak_ptr<BrokerConnection*> owner_;
  std::int16_t sent_version_;
  std::optional<ApiVersionsResponse> response_;
};

BrokerConnection::BrokerConnection(uv_loop_t* loop, net::Deferred& deferred, std::int32_t node_id,
                                   net::HostPort address, BrokerConnectionOptions options, EventListener listener)
    : loop_(loop),
      deferred_(deferred),
      node_id_(node_id),
      address_(std::move(address)),
      options_(std::move(options)),
      listener_(std::move(listener)),
      self_(std::make_shared<BrokerConnection*>(this)),
      timeout_timer_(loop),
      reconnect_timer_(loop),
      throttle_timer_(loop),
      backoff_(static_cast<std::uint64_t>(std::max(options_.reconnect_backoff_ms, 1)),
               static_cast<std::uint64_t>(std::max(options_.reconnect_backoff_max_ms, 1))),
      login_(loop, options_.sasl, describe(), versions_, *this) {}

BrokerConnection::~BrokerConnection() {
  self_.reset();  // callbacks already posted see we are gone
  transport_.close();
  tcp_.close();
}

std::string BrokerConnection::describe() const {
  if (node_id_ < 0) return "bootstrap broker " + address_.to_string();
  return "broker " + std::to_string(node_id_) + " (" + address_.to_string() + ")";
}

bool BrokerConnection::throttled() const {
  return throttled_until_ms_ != 0;
}

bool BrokerConnection::can_send_produce() const {
  return state_ == State::kReady && !retiring_ && !login_.reauthentication_pending() &&
         versions_.version(ApiKey::kProduce) && in_flight() < options_.max_in_flight && !throttled();
}

void BrokerConnection::connect() {
  wanted_ = true;
  retiring_ = false;
  if (state_ != State::kDisconnected || reconnect_timer_.active()) return;
  start_connect();
}

void BrokerConnection::reset(std::string_view reason) {
  if (state_ == State::kDisconnected) return;
  close_session(reason, Cause::kRequested);
}

void BrokerConnection::stop(std::string_view reason) {
  wanted_ = false;
  reconnect_timer_.stop();
  if (state_ != State::kDisconnected) {
    close_session(reason, Cause::kRequested);
  } else {
    emit(Event::kDisconnected);
  }
}

void BrokerConnection::retire() {
  retiring_ = true;
  wanted_ = false;
  reconnect_timer_.stop();
  maybe_finish_retiring();
}

void BrokerConnection::maybe_finish_retiring() {
  if (retiring_ && in_flight() == 0) stop("left the cluster metadata");
}

void BrokerConnection::start_connect() {
  state_ = State::kConnecting;
  ++session_;
  frame_reader_.emplace(options_.max_response_bytes);
  connect_deadline_ms_ = now() + static_cast<std::uint64_t>(options_.connect_timeout_ms);
  arm_timeout_timer();
  log().debug("{}: connecting", describe());

  const std::uint64_t session = session_;
  std::weak_ptr<BrokerConnection*> weak = self_;
  auto in_call = std::make_shared<bool>(true);
  net::Deferred* deferred = &deferred_;
  tcp_ = net::TcpConnection::connect(loop_, address_, [=](int status) {
    if (*in_call) {
      // The resolver refused before connect() returned, so tcp_ doesn't hold
      // the handle yet: handle the failure once it does.
      deferred->post([weak, session, status] {
        if (auto owner = weak.lock()) (*owner)->on_connected(session, status);
      });
      return;
    }
    if (auto owner = weak.lock()) (*owner)->on_connected(session, status);
  });
  *in_call = false;
}

void BrokerConnection::on_connected(std::uint64_t session, int status) {
  if (session != session_ || state_ != State::kConnecting) return;
  if (status != 0) {
    close_session(std::string("connect failed: ") + uv_strerror(status), Cause::kPeer);
    return;
  }
  Transport::Callbacks callbacks{[this] { on_transport_established(); }, [this](ByteView data) { on_data(data); },
                                 [this](const TransportClosed& closed) { on_transport_closed(closed); }};
  if (auto started = transport_.start(std::move(tcp_), options_.security, address_.host, std::move(callbacks));
      !started) {
    on_transport_closed(started.error());
    return;
  }
  if (transport_.established()) {
    on_transport_established();
  } else {
    log().debug("{}: connected, TLS handshake", describe());
  }
}

// Connected for the state machine only now: a TLS handshake still counted
// against the connect timeout.
void BrokerConnection::on_transport_established() {
  if (state_ != State::kConnecting) return;
  state_ = State::kNegotiating;
  log().debug("{}: connected ({}), sending ApiVersions v{}", describe(), transport_.describe(), api_versions_version_);
  send_api_versions();
}

void BrokerConnection::report_auth_failure(std::string_view reason) {
  if (options_.on_auth_failure) options_.on_auth_failure(*this, reason);
}

void BrokerConnection::on_transport_closed(const TransportClosed& closed) {
  if (!closed.auth_failure.empty()) report_auth_failure(closed.auth_failure);
  const std::string reason =
      closed.auth_failure.empty() ? closed.reason : closed.reason + " [" + std::string(closed.auth_failure) + "]";
  close_session(reason, closed.auth_failure.empty() ? Cause::kPeer : Cause::kAuthentication);
}

void BrokerConnection::send_api_versions() {
  ApiVersionsRequest request;
  request.client_software_name = kSoftwareName;
  request.client_software_version = kSoftwareVersion;
  RequestHeader header{ApiKey::kApiVersions, api_versions_version_, next_correlation_id_, options_.client_id, {}};
  enqueue(ApiKey::kApiVersions, api_versions_version_, encode_request_wire_frame(header, request),
          std::make_unique<ApiVersionsSink>(self_, api_versions_version_));
}

void BrokerConnection::on_api_versions(const ApiVersionsResponse& response, std::int16_t sent_version) {
  if (state_ != State::kNegotiating) return;
  if (response.error_code == ErrorCode::kUnsupportedVersion && sent_version > 0) {
    // KIP-511: the broker still listed what it speaks; ask again within it.
    api_versions_version_ = api_versions_retry_version(response, sent_version);
    log().debug("{}: ApiVersions v{} unsupported, retrying at v{}", describe(), sent_version, api_versions_version_);
    send_api_versions();
    return;
  }
  if (response.error_code != ErrorCode::kNone) {
    close_session("ApiVersions answered " + std::string(error_name(response.error_code)), Cause::kPeer);
    return;
  }
  versions_ = NegotiatedVersions::negotiate(response.api_keys);
  // A v0 fallback was for this session: a real broker whose connection was
  // cut mid-negotiation (a restart) speaks v3 again next time; only a broker
  // that lists nothing newer (librdkafka's mock) keeps getting v0.
  if (const auto listed = versions_.version(ApiKey::kApiVersions); listed && *listed >= kFirstApiVersionsVersion) {
    api_versions_version_ = kFirstApiVersionsVersion;
  }
  negotiated_with_ = sent_version;
  for (const std::string& u : versions_.unusable()) {
    log().error("{}: unusable for {}", describe(), u);
  }
  if (options_.sasl) {
    begin_authentication(/*reauth=*/false);
    return;
  }
  become_ready(/*again=*/false);
}

void BrokerConnection::become_ready(bool again) {
  state_ = State::kReady;
  failures_ = 0;
  if (!again) {
    const std::string sasl = options_.sasl ? ", authenticated with SASL " + options_.sasl->mechanism() : "";
    log().info("{}: ready (ApiVersions v{}): {}{}", describe(), negotiated_with_, versions_.describe(), sasl);
  }
  emit(Event::kReady);
}

// ---- SASL: the login runs in kAuthenticating (SaslLogin) ----

void BrokerConnection::begin_authentication(bool reauth) {
  state_ = State::kAuthenticating;
  login_.begin(reauth);
}

void BrokerConnection::maybe_start_reauthentication() {
  if (login_.reauthentication_pending() && state_ == State::kReady && in_flight() == 0) {
    begin_authentication(/*reauth=*/true);
  }
}

void BrokerConnection::send_login(const SaslHandshakeRequest& request, std::unique_ptr<ResponseSink> sink) {
  send_now(request, 1, std::move(sink));
}

void BrokerConnection::send_login(const SaslAuthenticateRequest& request, std::int16_t version,
                                  std::unique_ptr<ResponseSink> sink) {
  send_now(request, version, std::move(sink));
}

void BrokerConnection::login_succeeded(bool reauth) {
  if (reauth && options_.on_reauthenticated) options_.on_reauthenticated(node_id_);
  become_ready(reauth);
}

void BrokerConnection::login_failed(std::string_view metric_reason, const std::string& why) {
  report_auth_failure(metric_reason);
  close_session(why, Cause::kAuthentication);
}

void BrokerConnection::reauthentication_due() {
  log().debug("{}: session lifetime nearly over; re-authenticating once {} requests finish", describe(), in_flight());
  maybe_start_reauthentication();
}

void BrokerConnection::enqueue(ApiKey key, std::int16_t version, WireFrame frame, std::unique_ptr<ResponseSink> sink) {
  Pending p;
  p.correlation_id = next_correlation_id_;
  p.api_key = key;
  p.version = version;
  p.deadline_ms = now() + static_cast<std::uint64_t>(options_.request_timeout_ms);
  p.sink = std::move(sink);
  next_correlation_id_ =
      next_correlation_id_ == std::numeric_limits<std::int32_t>::max() ? 0 : next_correlation_id_ + 1;
  if (throttled() && key != ApiKey::kApiVersions) {
    // KIP-219: the broker has muted us; what we'd send now would only queue
    // in its socket while our timeout runs.
    p.frame = std::move(frame);
    held_.push_back(std::move(p));
  } else {
    p.frame = std::move(frame);
    write(std::move(p));
  }
  arm_timeout_timer();
}

void BrokerConnection::write(Pending pending) {
  WireFrame frame = std::move(pending.frame);
  if (pending.api_key == ApiKey::kProduce) ++produce_requests_sent_;
  // Outstanding before the write: a write that fails at once closes the
  // session, and that must fail this request too.
  in_flight_.push_back(std::move(pending));
  transport_.write(std::move(frame));
}

void BrokerConnection::arm_timeout_timer() {
  std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
  if (state_ == State::kConnecting) next = connect_deadline_ms_;
  if (!in_flight_.empty()) next = std::min(next, in_flight_.front().deadline_ms);
  if (!held_.empty()) next = std::min(next, held_.front().deadline_ms);
  if (next == std::numeric_limits<std::uint64_t>::max()) return;
  // Deadlines of one queue only grow, so a timer already due no later stays.
  if (timeout_timer_.active() && timer_deadline_ms_ <= next) return;
  timer_deadline_ms_ = next;
  const std::uint64_t t = now();
  timeout_timer_.start(next > t ? next - t : 0, 0, [this] { check_timeouts(); });
}

void BrokerConnection::check_timeouts() {
  const std::uint64_t t = now();
  if (state_ == State::kConnecting && t >= connect_deadline_ms_) {
    // TCP connected (the transport holds a session) but no TLS handshake
    // yet: a peer that accepts and says nothing, an auth failure too.
    const bool handshaking = transport_.tls();
    if (handshaking) report_auth_failure(net::metric_reason(net::TlsFailureKind::kHandshake));
    close_session(std::string(handshaking ? "TLS handshake" : "connect") + " timed out after " +
                      std::to_string(options_.connect_timeout_ms) + " ms" + (handshaking ? " [tls_handshake]" : ""),
                  Cause::kTimeout);
    return;
  }
  const Pending* expired = nullptr;
  if (!in_flight_.empty() && in_flight_.front().deadline_ms <= t) expired = &in_flight_.front();
  if (!expired && !held_.empty() && held_.front().deadline_ms <= t) expired = &held_.front();
  if (expired) {
    // Java and librdkafka close here too: the answer may still come, and
    // would then be taken for the next request's.
    close_session(std::string(api_name(expired->api_key)) + " v" + std::to_string(expired->version) +
                      " (correlation id " + std::to_string(expired->correlation_id) + ") timed out after " +
                      std::to_string(options_.request_timeout_ms) + " ms",
                  Cause::kTimeout);
    return;
  }
  arm_timeout_timer();
}

// ---- responses, throttling, closing ----

void BrokerConnection::on_data(ByteView data) {
  if (!frame_reader_) return;
  auto appended = frame_reader_->append(data);
  // Frames completed before a bad size prefix are still good answers.
  while (auto frame = frame_reader_->pop()) {
    if (!handle_frame(*frame)) return;  // session closed, or we were destroyed
  }
  if (!appended) {
    close_session("bad response frame: " + appended.error().describe() + " (bound " +
                      std::to_string(options_.max_response_bytes) + " bytes)",
                  Cause::kProtocolError);
  }
}

bool BrokerConnection::handle_frame(ByteView frame) {
  if (in_flight_.empty()) {
    close_session("a response of " + std::to_string(frame.size()) + " bytes arrived with no request outstanding",
                  Cause::kProtocolError);
    return false;
  }
  Pending& oldest = in_flight_.front();
  // Built only on the error paths: every response would format it.
  const auto what = [&oldest] {
    return std::string(api_name(oldest.api_key)) + " v" + std::to_string(oldest.version) + " (correlation id " +
           std::to_string(oldest.correlation_id) + ")";
  };
  WireReader r(frame);
  auto correlation_id = decode_response_header(r, oldest.api_key, oldest.version);
  if (!correlation_id) {
    close_session("undecodable response header for " + what() + ": " + correlation_id.error().describe(),
                  Cause::kProtocolError);
    return false;
  }
  if (*correlation_id != oldest.correlation_id) {
    // Kafka answers in order per connection: anything else means we no
    // longer know which request an answer belongs to.
    close_session("response correlation id " + std::to_string(*correlation_id) +
                      " does not match the oldest outstanding request, " + what(),
                  Cause::kProtocolError);
    return false;
  }
  auto throttle_ms = oldest.sink->decode(r.rest(), oldest.version);
  if (!throttle_ms) {
    close_session("undecodable " + what() + " response: " + throttle_ms.error().describe(), Cause::kProtocolError);
    return false;
  }
  Pending done = std::move(in_flight_.front());
  in_flight_.pop_front();
  if (*throttle_ms > 0 && client_throttles(done.api_key, done.version)) start_throttle(*throttle_ms);

  const std::uint64_t session = session_;
  std::weak_ptr<BrokerConnection*> weak = self_;
  done.sink->deliver();
  if (weak.expired() || session != session_) return false;
  maybe_finish_retiring();
  if (session == session_) maybe_start_reauthentication();  // KIP-368: waits for in-flight requests
  return session == session_;
}

void BrokerConnection::start_throttle(std::int32_t throttle_ms) {
  // A broker's quota throttle is seconds at most (its quota window); a larger
  // one is a broken or hostile broker and would hold the connection for up
  // to 24 days (INT32_MAX ms). Held longer than a request may wait, the held
  // requests would time out anyway.
  if (throttle_ms > options_.request_timeout_ms) {
    log().warn("{}: throttle_time_ms {} capped at request_timeout_ms ({} ms)", describe(), throttle_ms,
               options_.request_timeout_ms);
    throttle_ms = options_.request_timeout_ms;
  }
  const std::uint64_t until = now() + static_cast<std::uint64_t>(throttle_ms);
  if (until <= throttled_until_ms_) return;
  throttled_until_ms_ = until;
  log().debug("{}: throttled for {} ms (KIP-219)", describe(), throttle_ms);
  throttle_timer_.start(static_cast<std::uint64_t>(throttle_ms), 0, [this] { end_throttle(); });
}

void BrokerConnection::end_throttle() {
  throttled_until_ms_ = 0;
  const std::uint64_t session = session_;
  while (!held_.empty() && session == session_) {
    Pending p = std::move(held_.front());
    held_.pop_front();
    write(std::move(p));
  }
  if (session == session_) emit(Event::kThrottleEnded);
}

void BrokerConnection::close_session(std::string_view reason, Cause cause) {
  const State was = state_;
  if (was == State::kDisconnected) return;
  ++session_;
  state_ = State::kDisconnected;
  transport_.close();
  tcp_.close();
  frame_reader_.reset();
  timeout_timer_.stop();
  throttle_timer_.stop();
  throttled_until_ms_ = 0;
  login_.reset();

  const std::size_t failed = fail_outstanding(cause);
  const bool negotiation_fallback = cause != Cause::kRequested && cause != Cause::kTimeout &&
                                    cause != Cause::kAuthentication && was == State::kNegotiating &&
                                    api_versions_version_ > 0;
  log_close(was, reason, cause, negotiation_fallback, failed);
  if (negotiation_fallback) {
    api_versions_version_ = 0;
    if (wanted_) schedule_reconnect(0);
  } else if (cause == Cause::kRequested) {
    if (wanted_) schedule_reconnect(0);
  } else {
    ++failures_;
    if (wanted_) {
      const std::uint64_t delay = backoff_.backoff_ms(failures_);
      log().debug("{}: reconnecting in {} ms (failure {})", describe(), delay, failures_);
      schedule_reconnect(delay);
    }
  }
  emit(Event::kDisconnected);
}

// Every outstanding request fails, later: the caller may be inside a send.
// Returns how many (ApiVersions aside, which is the connection's own).
std::size_t BrokerConnection::fail_outstanding(Cause cause) {
  const std::uint64_t t = now();
  auto failing = std::make_shared<std::vector<std::pair<std::unique_ptr<ResponseSink>, ErrorCode>>>();
  for (auto* queue : {&in_flight_, &held_}) {
    for (Pending& p : *queue) {
      const ErrorCode e =
          cause == Cause::kTimeout && p.deadline_ms <= t ? ErrorCode::kRequestTimedOut : ErrorCode::kNetworkException;
      // The connection's own requests (ApiVersions, SASL) end with the session.
      if (!connection_request(p.api_key)) failing->emplace_back(std::move(p.sink), e);
    }
    queue->clear();
  }
  if (!failing->empty()) {
    deferred_.post([failing] {
      for (auto& [sink, error] : *failing) sink->fail(error);
    });
  }
  return failing->size();
}

void BrokerConnection::log_close(State was, std::string_view reason, Cause cause, bool negotiation_fallback,
                                 std::size_t failed_requests) {
  const std::string failed =
      failed_requests == 0 ? std::string() : " (" + std::to_string(failed_requests) + " outstanding requests failed)";
  if (cause == Cause::kRequested) {
    log().debug("{}: closed while {}: {}{}", describe(), to_string(was), reason, failed);
    return;
  }
  if (negotiation_fallback) {
    // librdkafka's mock closes on an ApiVersions version it doesn't speak,
    // and answers v3 in a layout nobody can parse (tests/golden/PROVENANCE.md).
    // v0 is the version every broker reads.
    log().info("{}: ApiVersions v{} failed ({}); retrying with v0", describe(), api_versions_version_, reason);
    return;
  }
  // At most one warning per broker per interval; the rest go to debug and
  // are counted in the next warning.
  const auto held_back = warn_limiter_.admit(now());
  const bool error = cause == Cause::kProtocolError || cause == Cause::kAuthentication;
  const auto level = !held_back ? spdlog::level::debug : error ? spdlog::level::err : spdlog::level::warn;
  const std::string more =
      held_back && *held_back > 0 ? " (" + std::to_string(*held_back) + " more since the last warning)" : "";
  log().log(level, "{}: disconnected while {}: {}{}{}", describe(), to_string(was), reason, failed, more);
}

void BrokerConnection::schedule_reconnect(std::uint64_t delay_ms) {
  reconnect_timer_.start(delay_ms, 0, [this] {
    if (wanted_ && state_ == State::kDisconnected) start_connect();
  });
}

void BrokerConnection::fail_later(std::unique_ptr<ResponseSink> sink, ErrorCode error, std::string_view why) {
  log().debug("{}: request refused ({}): {}", describe(), why, error_name(error));
  std::shared_ptr<ResponseSink> shared(std::move(sink));
  deferred_.post([shared, error] { shared->fail(error); });
}

void BrokerConnection::emit(Event event) {
  std::weak_ptr<BrokerConnection*> weak = self_;
  deferred_.post([weak, event] {
    if (auto owner = weak.lock()) {
      BrokerConnection* c = *owner;
      if (c->listener_) c->listener_(*c, event);
    }
  });
}

}  // namespace pp::upstream
