#include "proxy/frontend/frontend.h"

#include <algorithm>
#include <vector>

#include "proxy/frontend/client_session.h"
#include "proxy/frontend/frontend_context.h"
#include "proxy/frontend/log.h"

namespace pp {
namespace {

// "10.0.0.7:51234" -> "10.0.0.7", "[::1]:51234" -> "::1": one peer whatever
// its source port.
std::string peer_address(const std::string& peer_name) {
  std::string host = peer_name.substr(0, peer_name.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

}  // namespace

Frontend::Frontend(uv_loop_t* loop, FrontendConfig config, RecordSink& sink, TopicDirectory& topics,
                   FrontendObserver* observer)
    : loop_(loop),
      context_(std::make_shared<FrontendContext>(loop, std::move(config), sink, topics, observer)),
      deadlines_(loop),
      deferred_(loop) {
  context_->deadlines = &deadlines_;
  context_->after_submit = [this] { maybe_pause(); };
  context_->session_closed = [this](std::uint64_t id) { forget(id); };
  context_->defer = [this](std::function<void()> fn) { defer(std::move(fn)); };
  context_->under_share_held = [this](std::size_t share) { return under_share_held(share); };
  context_->headroom_taken = [this](std::size_t bytes) { under_share_held_ += bytes; };
  context_->share_grew = [this] { recheck_shares(); };
}

Frontend::~Frontend() {
  stop();
  context_->deadlines = nullptr;
  // A late sink callback must not reach a destroyed front end.
  context_->sink.memory_budget().set_available_listener(nullptr);
  context_->sink.memory_budget().set_room_listener(nullptr);
}

std::expected<void, std::string> Frontend::start() {
  const FrontendConfig& config = context_->config;
  auto listener =
      net::TcpListener::listen(loop_, config.listen_address, [this](net::TcpConnection c) { on_accept(std::move(c)); });
  if (!listener) return std::unexpected(listener.error());
  listener_ = std::move(*listener);
  context_->stopped = false;

  context_->advertised.host =
      config.advertised_address.host.empty() ? config.listen_address.host : config.advertised_address.host;
  context_->advertised.port = config.advertised_address.port != 0 ? config.advertised_address.port : listener_.port();

  // Called from inside the sink's own completion path: resume on the next
  // loop turn, so the requests that resuming answers don't re-enter it.
  context_->sink.memory_budget().set_available_listener([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.lock()) defer([this] { resume(); });
  });
  context_->sink.memory_budget().set_room_listener([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.lock()) recheck_room();
  });

  start_sweep();

  frontend::log().info("listening for Kafka clients on {} (advertised as {}:{}), max {} connections",
                       net::HostPort{config.listen_address.host, port()}.to_string(), context_->advertised.host,
                       context_->advertised.port, config.max_connections);
  return {};
}

void Frontend::drain() {
  if (context_->stopped || draining_) return;
  draining_ = true;
  listener_.close();
  frontend::log().info("draining: answering the requests {} clients already sent, then closing them", sessions_.size());
  for (auto& s : sessions_in_turn()) s->finish_then_close();
}

void Frontend::stop() {
  if (context_->stopped) return;
  context_->stopped = true;
  listener_.close();
  sweep_timer_ = net::Timer();
  deferred_.cancel();
  for (auto& s : sessions_in_turn()) s->close_now();
  sessions_.clear();
  if (context_->paused) {
    context_->counters.backpressure_ms_total += uv_now(loop_) - context_->paused_since_ms;
    context_->paused = false;
    context_->counters.backpressure_active = false;
    context_->observer.on_backpressure(false);
  }
}

std::uint16_t Frontend::port() const {
  return listener_.port();
}

const FrontendCounters& Frontend::counters() const {
  return context_->counters;
}

bool Frontend::backpressure_active() const {
  return context_->paused;
}

void Frontend::on_accept(net::TcpConnection connection) {
  FrontendContext& ctx = *context_;
  if (ctx.stopped || draining_) return;
  if (sessions_.size() >= ctx.config.max_connections) {
    ++ctx.counters.connections_refused_total;
    frontend::log().warn("refusing client {}: max_connections ({}) reached", connection.peer_name(),
                         ctx.config.max_connections);
    connection.close();
    return;
  }
  const std::uint64_t id = next_session_id_++;
  if (ctx.config.max_connections_per_peer > 0) {
    std::string peer = peer_address(connection.peer_name());
    std::size_t& open = connections_by_peer_[peer];
    if (open >= ctx.config.max_connections_per_peer) {
      ++ctx.counters.connections_refused_total;
      frontend::log().warn("refusing client {}: max_connections_per_peer ({}) reached for {}", connection.peer_name(),
                           ctx.config.max_connections_per_peer, peer);
      connection.close();
      return;
    }
    ++open;
    peer_of_session_.emplace(id, std::move(peer));
  }
  auto session = std::make_shared<ClientSession>(context_, std::move(connection), id);
  sessions_.emplace(id, session);
  ++ctx.counters.connections_accepted_total;
  ctx.counters.client_connections = static_cast<std::int64_t>(sessions_.size());
  ctx.observer.on_client_connections(ctx.counters.client_connections);
  frontend::log().debug("{} connected", session->describe());
  session->start();
}

void Frontend::forget(std::uint64_t session_id) {
  if (sessions_.erase(session_id) == 0) return;
  if (auto peer = peer_of_session_.find(session_id); peer != peer_of_session_.end()) {
    if (auto open = connections_by_peer_.find(peer->second);
        open != connections_by_peer_.end() && --open->second == 0) {
      connections_by_peer_.erase(open);
    }
    peer_of_session_.erase(peer);
  }
  context_->counters.client_connections = static_cast<std::int64_t>(sessions_.size());
  context_->observer.on_client_connections(context_->counters.client_connections);
}

// After runs were submitted or frame bytes read: at or over the one budget,
// stop reading from every client (docs/design/ARCHITECTURE.md rule 5) until
// the budget says memory is back.
void Frontend::maybe_pause() {
  FrontendContext& ctx = *context_;
  if (ctx.paused || ctx.stopped || !ctx.sink.memory_budget().over()) return;
  ctx.paused = true;
  ctx.paused_since_ms = uv_now(loop_);
  ctx.counters.backpressure_active = true;
  ++ctx.counters.backpressure_pauses_total;
  ctx.observer.on_backpressure(true);
  // Info at most every few seconds: under a sustained burst pauses come and
  // go every few milliseconds (the counters have them all).
  const bool say = ctx.paused_since_ms >= last_pause_log_ms_ + kPauseLogIntervalMs || last_pause_log_ms_ == 0;
  if (say) last_pause_log_ms_ = ctx.paused_since_ms;
  update_accepting();
  frontend::log().log(say ? spdlog::level::info : spdlog::level::debug,
                      "back-pressure: {} of {} bytes of memory budget in use, pausing reads from {} clients{} "
                      "(pause {} since start)",
                      ctx.sink.memory_budget().used(), ctx.sink.memory_budget().limit(), sessions_.size(),
                      listener_.accepting_paused() ? " and accepts" : "", ctx.counters.backpressure_pauses_total);
  for (auto& [id, s] : sessions_) s->update_reading();
}

void Frontend::resume() {
  FrontendContext& ctx = *context_;
  if (!ctx.paused) return;
  const std::uint64_t paused_ms = uv_now(loop_) - ctx.paused_since_ms;
  ctx.paused = false;
  ctx.counters.backpressure_active = false;
  ctx.counters.backpressure_ms_total += paused_ms;
  ctx.observer.on_backpressure(false);
  frontend::log().debug("back-pressure over after {} ms, resuming reads", paused_ms);
  // Resuming a client answers the frames it had buffered, which may pause
  // everyone again; stop going round then.
  for (auto& s : sessions_in_turn()) {
    if (ctx.paused) break;
    s->update_reading();
  }
  update_accepting();
}

// Accepts pause with reads (issue 14: a session costs memory the budget does
// not see), but only while a newcomer could not start a frame anyway: over
// the budget, a connection under its share is admitted only in the headroom
// (ARCHITECTURE.md rule 5, "Fair share"), so while that has room a newcomer is still
// taken. Re-checked on pause, resume and every sweep; meanwhile connections
// wait in the kernel's backlog, none refused.
void Frontend::update_accepting() {
  FrontendContext& ctx = *context_;
  bool newcomer_admissible = !ctx.paused && !ctx.sink.memory_budget().over();
  if (!newcomer_admissible && ctx.active_with(false) >= 2) {
    newcomer_admissible = under_share_held(ctx.fair_share(false)) < ctx.share_headroom();
  }
  if (newcomer_admissible) {
    listener_.resume_accepting();
  } else {
    listener_.pause_accepting();
  }
}

void Frontend::sweep() {
  const std::uint64_t now = uv_now(loop_);
  context_->deadline_log.tick(now);
  if (context_->paused) update_accepting();  // the headroom may have room again
  for (auto& s : sessions_in_turn()) {
    if (s->idle(now)) {
      frontend::log().info("closing {}: idle for {} ms", s->describe(), context_->config.idle_timeout_ms);
      s->close_now();
      continue;
    }
    if (s->frame_overdue(now)) {
      ++context_->counters.connections_closed_for_errors_total;
      frontend::log().warn("closing {}: a request frame was not complete {} ms after its first byte ({} bytes held)",
                           s->describe(), context_->config.frame_timeout_ms, s->partial_frame_bytes());
      s->close_now();
      continue;
    }
    // A client whose unread responses had stopped its reads may have drained.
    s->update_reading();
  }
}

// A snapshot (sessions may close while we go round), starting one further
// each time so no client is always first to resume or last to be served.
std::vector<std::shared_ptr<ClientSession>> Frontend::sessions_in_turn() {
  std::vector<std::shared_ptr<ClientSession>> out;
  out.reserve(sessions_.size());
  for (auto& [id, s] : sessions_) out.push_back(s);
  if (!out.empty()) {
    std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(next_first_session_ % out.size()), out.end());
    ++next_first_session_;
  }
  return out;
}

std::size_t Frontend::under_share_held(std::size_t share) {
  const std::uint64_t now = uv_now(loop_);
  if (under_share_held_known_ && now == under_share_held_ms_ && share == under_share_held_share_) {
    return under_share_held_;
  }
  std::size_t held = 0;
  for (const auto& [id, s] : sessions_) {
    if (s->held_bytes() < share) held += s->held_bytes();
  }
  under_share_held_ = held;
  under_share_held_ms_ = now;
  under_share_held_share_ = share;
  under_share_held_known_ = true;
  return held;
}

// Fewer active connections: a larger share for each. Connections that had
// stopped reading at their share may go on (once per loop turn at most).
void Frontend::recheck_shares() {
  if (share_recheck_scheduled_ || context_->stopped) return;
  share_recheck_scheduled_ = true;
  defer([this] {
    share_recheck_scheduled_ = false;
    for (auto& s : sessions_in_turn()) {
      if (!s->reading()) s->update_reading();
    }
  });
}

// Room someone waited for is free (MemoryBudget::want_room): each connection
// looks again, in turn, on the next loop turn; the first may take the room
// and the others then wait again.
void Frontend::recheck_room() {
  if (room_recheck_scheduled_ || context_->stopped) return;
  room_recheck_scheduled_ = true;
  defer([this] {
    room_recheck_scheduled_ = false;
    for (auto& s : sessions_in_turn()) s->update_reading();
  });
}

// Idle connections are found by a sweep rather than a timer per client: one
// timer however many clients, at a quarter of the timeout (at most 1 s late).
void Frontend::start_sweep() {
  const auto period =
      static_cast<std::uint64_t>(std::clamp<std::int64_t>(context_->config.idle_timeout_ms / 4, 10, 1000));
  sweep_timer_ = net::Timer(loop_);
  sweep_timer_.start(period, period, [this] { sweep(); });
}

void Frontend::set_idle_timeout_ms(std::int64_t ms) {
  context_->config.idle_timeout_ms = ms;
  if (!context_->stopped && listener_.port() != 0) start_sweep();
}

void Frontend::set_upstream_compression(CompressionCodec codec) {
  context_->config.upstream_compression = codec;
}

void Frontend::defer(std::function<void()> fn) {
  if (context_->stopped) return;
  deferred_.post(std::move(fn));
}

}  // namespace pp
