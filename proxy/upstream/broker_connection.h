// One connection to one broker, owned by the loop thread:
//
//   disconnected -> connecting -> negotiating (ApiVersions) [-> authenticating] -> ready
//         ^______________ backoff (exponential, jittered) _________________________|
//
// With SASL configured, its SaslLogin runs SaslHandshake v1 and
// SaslAuthenticate after ApiVersions. A session lifetime from the broker
// (KIP-368) makes a re-authentication due at 0.85 to 0.95 of it: from then no
// new Produce is sent, the outstanding requests finish, the connection goes
// back to authenticating on the same socket and is ready again afterwards.
//
// Requests get increasing correlation ids and Kafka answers them in order on
// a connection, so a response must match the oldest outstanding request; any
// other is a protocol error and closes the connection. Every request ends
// exactly once, through its ResponseSink, never inside the call that sent it:
// with its response, REQUEST_TIMED_OUT (client-side request timeout, which
// also closes the connection, since a late answer would desynchronise the
// order) or NETWORK_EXCEPTION (disconnect, bad bytes from the broker).
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/backoff.h"
#include "proxy/base/log_limiter.h"
#include "proxy/net/deferred.h"
#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/frame.h"
#include "proxy/upstream/api_versions_negotiation.h"
#include "proxy/upstream/response_sink.h"
#include "proxy/upstream/sasl/authenticator.h"
#include "proxy/upstream/sasl_login.h"
#include "proxy/upstream/transport.h"

namespace pp::upstream {

class BrokerConnection;

struct BrokerConnectionOptions {
  std::string client_id = "produce-proxy";
  int request_timeout_ms = 30000;
  int max_in_flight = 32;  // max_in_flight_per_connection: gates Produce only
  int reconnect_backoff_ms = 50;
  int reconnect_backoff_max_ms = 1000;
  // TCP connect plus the TLS handshake; a blackholed address otherwise hangs
  // for the kernel's SYN retries (Java's socket.connection.setup.timeout.ms).
  int connect_timeout_ms = 10000;
  // A response frame over this is garbage or an attack, not a Kafka answer.
  std::size_t max_response_bytes = 100 * 1024 * 1024;
  // Plaintext unless it holds a TLS context.
  TransportSecurity security;
  // A connection that failed to authenticate (a TLS handshake that failed):
  // its reason is a metric label (tls_certificate, tls_hostname, ...).
  std::function<void(const BrokerConnection&, std::string_view reason)> on_auth_failure;
  // upstream.sasl; null: no SASL. Shared by every connection of an Upstream.
  std::shared_ptr<sasl::Authenticator> sasl;
  // Told of each completed KIP-368 re-authentication (failures go to
  // on_auth_failure, SASL's as TLS's).
  std::function<void(std::int32_t node)> on_reauthenticated;
};

class BrokerConnection final : private SaslLogin::Connection {
 public:
  enum class State : std::uint8_t { kDisconnected, kConnecting, kNegotiating, kAuthenticating, kReady };
  enum class Event : std::uint8_t {
    kReady,          // negotiated: requests may be sent
    kThrottleEnded,  // KIP-219 wait over: Produce may be sendable again
    kDisconnected,   // closed, for whatever reason (outstanding requests fail)
  };
  // Always called from the loop on a later iteration, never inside a call
  // into this object, so the listener may destroy the connection.
  using EventListener = std::function<void(BrokerConnection&, Event)>;

  BrokerConnection(uv_loop_t* loop, net::Deferred& deferred, std::int32_t node_id, net::HostPort address,
                   BrokerConnectionOptions options, EventListener listener);
  // Closes without calling the sinks of outstanding requests (shutdown); call
  // stop() and let the loop run first to have them fail.
  ~BrokerConnection() override;
  BrokerConnection(const BrokerConnection&) = delete;
  BrokerConnection& operator=(const BrokerConnection&) = delete;

  // Keep this connection up from now on: connect now (or when the current
  // backoff ends), and reconnect after every failure until stop()/retire().
  void connect();
  // Close now, failing outstanding requests with NETWORK_EXCEPTION, and
  // reconnect at once if wanted (docs/design/PIPELINE.md, "Delivery timeout and
  // unresolved sequences": an expiring batch must not stay in flight).
  void reset(std::string_view reason);
  // Close now, failing outstanding requests, and stay down until connect().
  void stop(std::string_view reason);
  // Stop once the outstanding requests have finished (a broker that left the
  // cluster metadata); no new requests should be sent.
  void retire();

  // Sends when ready (held back while a KIP-219 throttle lasts); otherwise
  // the sink fails with NETWORK_EXCEPTION on a later iteration.
  template <Message Request>
  void send(const Request& request, std::int16_t version, std::unique_ptr<ResponseSink> sink) {
    if (state_ != State::kReady) {
      fail_later(std::move(sink), ErrorCode::kNetworkException, "not ready");
      return;
    }
    send_now(request, version, std::move(sink));
  }

  std::int32_t node_id() const { return node_id_; }
  const net::HostPort& address() const { return address_; }
  State state() const { return state_; }
  bool ready() const { return state_ == State::kReady; }
  bool wanted() const { return wanted_; }
  bool retiring() const { return retiring_; }
  // Meaningful once ready; what the last negotiation settled until then.
  const NegotiatedVersions& versions() const { return versions_; }
  // Sent and awaiting an answer, plus held back by a throttle.
  // SIGHUP: requests sent from now on get this deadline.
  void set_request_timeout_ms(int ms) { options_.request_timeout_ms = ms; }
  // SIGHUP: the next connect uses it; a session already up keeps its own.
  void set_security(TransportSecurity security) { options_.security = std::move(security); }
  int in_flight() const { return static_cast<int>(in_flight_.size() + held_.size()); }
  bool throttled() const;
  // Ready, Produce usable (v3+), under max_in_flight and not throttled.
  bool can_send_produce() const;
  std::uint64_t produce_requests_sent() const { return produce_requests_sent_; }
  std::uint64_t reauthentications() const { return login_.reauthentications(); }
  // KIP-368: a re-authentication is due or running (no new Produce meanwhile).
  bool reauthenticating() const { return login_.reauthenticating(); }
  int consecutive_failures() const { return failures_; }
  std::string describe() const;  // "broker 2 (127.0.0.1:9092)"

 private:
  struct Pending {
    std::int32_t correlation_id = 0;
    ApiKey api_key = ApiKey::kProduce;
    std::int16_t version = 0;
    std::uint64_t deadline_ms = 0;
    std::unique_ptr<ResponseSink> sink;
    WireFrame frame;  // only while held back by a throttle
  };
  class ApiVersionsSink;

  void start_connect();
  void schedule_reconnect(std::uint64_t delay_ms);
  void on_connected(std::uint64_t session, int status);
  void on_transport_established();
  void on_transport_closed(const TransportClosed& closed);
  void report_auth_failure(std::string_view reason);
  void send_api_versions();
  void on_api_versions(const ApiVersionsResponse& response, std::int16_t sent_version);
  // `again`: after a re-authentication (no new log line).
  void become_ready(bool again);
  void begin_authentication(bool reauth);
  void maybe_start_reauthentication();
  // ---- SaslLogin::Connection ----
  void send_login(const SaslHandshakeRequest& request, std::unique_ptr<ResponseSink> sink) override;
  void send_login(const SaslAuthenticateRequest& request, std::int16_t version,
                  std::unique_ptr<ResponseSink> sink) override;
  void login_succeeded(bool reauth) override;
  void login_failed(std::string_view metric_reason, const std::string& why) override;
  void reauthentication_due() override;

  // Encodes and sends `request` whatever the state; send() checks it first.
  template <Message Request>
  void send_now(const Request& request, std::int16_t version, std::unique_ptr<ResponseSink> sink) {
    RequestHeader header{Request::kApiKey, version, next_correlation_id_, options_.client_id, {}};
    enqueue(Request::kApiKey, version, encode_request_wire_frame(header, request), std::move(sink));
  }
  void enqueue(ApiKey key, std::int16_t version, WireFrame frame, std::unique_ptr<ResponseSink> sink);
  void write(Pending pending);
  void on_data(ByteView data);
  bool handle_frame(ByteView frame);
  void check_timeouts();
  void arm_timeout_timer();
  void start_throttle(std::int32_t throttle_ms);
  void end_throttle();
  void maybe_finish_retiring();

  // kAuthentication: the peer refused us (a TLS handshake, SASL); never a
  // reason to retry ApiVersions at v0.
  enum class Cause : std::uint8_t { kRequested, kPeer, kProtocolError, kTimeout, kAuthentication };
  void close_session(std::string_view reason, Cause cause);
  std::size_t fail_outstanding(Cause cause);
  void log_close(State was, std::string_view reason, Cause cause, bool negotiation_fallback,
                 std::size_t failed_requests);
  void fail_later(std::unique_ptr<ResponseSink> sink, ErrorCode error, std::string_view why);
  void emit(Event event);
  // Refreshed, not the loop's cached time: a call made from outside a loop
  // callback (start-up, a test) may come long after the loop last woke.
  std::uint64_t now() const {
    uv_update_time(loop_);
    return net::now_ms(loop_);
  }

  uv_loop_t* loop_;
  net::Deferred& deferred_;
  std::int32_t node_id_;
  net::HostPort address_;
  BrokerConnectionOptions options_;
  EventListener listener_;
  // Lets callbacks posted to the loop find out whether we still exist.
  std::shared_ptr<BrokerConnection*> self_;

  State state_ = State::kDisconnected;
  bool wanted_ = false;
  bool retiring_ = false;
  std::uint64_t session_ = 0;  // bumped at every connect and close
  net::TcpConnection tcp_;     // while connecting; then the transport's
  Transport transport_;
  std::optional<FrameReader> frame_reader_;
  std::deque<Pending> in_flight_;  // written, oldest first
  std::deque<Pending> held_;       // waiting for a throttle to end
  std::int32_t next_correlation_id_ = 0;
  std::uint64_t connect_deadline_ms_ = 0;
  std::uint64_t timer_deadline_ms_ = 0;  // when timeout_timer_ fires

  std::int16_t api_versions_version_ = kFirstApiVersionsVersion;
  std::int16_t negotiated_with_ = 0;  // the ApiVersions version that was answered
  NegotiatedVersions versions_;

  std::uint64_t throttled_until_ms_ = 0;
  net::Timer timeout_timer_;
  net::Timer reconnect_timer_;
  net::Timer throttle_timer_;
  ExponentialBackoff backoff_;
  int failures_ = 0;
  LogLimiter warn_limiter_{std::chrono::seconds(10)};  // disconnect warnings
  std::uint64_t produce_requests_sent_ = 0;

  // Declared after what it reads (options_.sasl, versions_); reset by every close.
  SaslLogin login_;
};

std::string_view to_string(BrokerConnection::State state);

}  // namespace pp::upstream
