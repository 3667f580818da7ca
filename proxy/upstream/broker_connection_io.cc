// BrokerConnection: reading responses, throttling, and closing a session.
#include <string>
#include <utility>
#include <vector>

#include "proxy/protocol/header.h"
#include "proxy/upstream/broker_connection.h"
#include "proxy/upstream/log.h"

namespace pp::upstream {
namespace {

bool connection_request(ApiKey key) {
  return key == ApiKey::kApiVersions || key == ApiKey::kSaslHandshake || key == ApiKey::kSaslAuthenticate;
}

}  // namespace

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
  reset_authentication();

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
