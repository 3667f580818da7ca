#include "proxy/frontend/frontend.h"

#include <algorithm>
#include <vector>

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
      deferred_(loop),
      flow_(loop, context_->sink.memory_budget(), listener_, deferred_, context_->counters, context_->observer),
      handshakes_(loop, context_->sink.memory_budget(), context_->counters, context_->observer, *this) {
  context_->deadlines = &deadlines_;
  context_->flow = &flow_;
  context_->deferred = &deferred_;
}

// A late sink callback must not reach a destroyed front end: the context
// forgets what goes with it, and FlowControl gives the budget's listeners back.
Frontend::~Frontend() {
  stop();
  context_->deadlines = nullptr;
  context_->flow = nullptr;
  context_->deferred = nullptr;
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

  flow_.start();
  start_sweep();

  handshakes_.set_timeout_ms(static_cast<std::uint64_t>(config.tls_handshake_timeout_ms));
  frontend::log().info("listening for Kafka clients on {} ({}, advertised as {}:{}), max {} connections",
                       net::HostPort{config.listen_address.host, port()}.to_string(),
                       handshakes_.enabled() ? "TLS" : "plaintext", context_->advertised.host,
                       context_->advertised.port, config.max_connections);
  return {};
}

void Frontend::drain() {
  if (context_->stopped || draining_) return;
  draining_ = true;
  listener_.close();
  handshakes_.close_all();
  frontend::log().info("draining: answering the requests {} clients already sent, then closing them", sessions_.size());
  for (auto& s : sessions_in_turn()) s->finish_then_close();
}

void Frontend::stop() {
  if (context_->stopped) return;
  context_->stopped = true;
  flow_.stop();
  listener_.close();
  sweep_timer_ = net::Timer();
  deferred_.cancel();
  handshakes_.close_all();
  for (auto& s : sessions_in_turn()) s->close_now();
  sessions_.clear();
  flow_.end_pause();
}

ClientProducers& Frontend::client_producers() {
  return context_->client_producers;
}

std::uint16_t Frontend::port() const {
  return listener_.port();
}

const FrontendCounters& Frontend::counters() const {
  return context_->counters;
}

bool Frontend::backpressure_active() const {
  return flow_.paused();
}

void Frontend::on_accept(net::TcpConnection connection) {
  FrontendContext& ctx = *context_;
  if (ctx.stopped || draining_) return;
  // A connection in its TLS handshake counts as one.
  if (sessions_.size() + handshakes_.size() >= ctx.config.max_connections) {
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
  if (handshakes_.enabled()) {
    if (!handshakes_.start(id, std::move(connection), uv_now(loop_))) forget_peer(id);
    return;
  }
  const std::string peer = connection.peer_name();
  start_session(id,
                net::AcceptedConnection::plaintext(std::move(connection),
                                                   [this, peer] { handshakes_.tls_on_plaintext_listener(peer); }),
                Principal::anonymous());
}

void Frontend::handshake_done(std::uint64_t id, net::AcceptedConnection connection, Principal principal) {
  if (context_->stopped || draining_) {
    connection.close();
    forget_peer(id);
    return;
  }
  start_session(id, std::move(connection), principal);
}

void Frontend::handshake_failed(std::uint64_t id) {
  forget_peer(id);
}

void Frontend::start_session(std::uint64_t id, net::AcceptedConnection connection, const Principal& principal) {
  FrontendContext& ctx = *context_;
  SessionRegistry& registry = *this;
  auto session = std::make_shared<ClientSession>(context_, std::move(connection), id, registry, dispatch_);
  if (!principal.is_anonymous()) {
    // A verified client certificate authenticates the connection, SASL or not.
    session->set_principal(principal);
    session->auth().authenticate_by_certificate();
    session->lift_unauthenticated_frame_limit();
  }
  sessions_.emplace(id, session);
  ++ctx.counters.connections_accepted_total;
  ctx.counters.client_connections = static_cast<std::int64_t>(sessions_.size());
  ctx.observer.on_client_connections(ctx.counters.client_connections);
  frontend::log().debug("{} connected", session->describe());
  session->start();
}

void Frontend::session_closed(std::uint64_t session_id) {
  if (sessions_.erase(session_id) == 0) return;
  forget_peer(session_id);
  context_->counters.client_connections = static_cast<std::int64_t>(sessions_.size());
  context_->observer.on_client_connections(context_->counters.client_connections);
}

void Frontend::forget_peer(std::uint64_t id) {
  if (auto peer = peer_of_session_.find(id); peer != peer_of_session_.end()) {
    if (auto open = connections_by_peer_.find(peer->second);
        open != connections_by_peer_.end() && --open->second == 0) {
      connections_by_peer_.erase(open);
    }
    peer_of_session_.erase(peer);
  }
}

void Frontend::set_tls_context(std::shared_ptr<net::TlsContext> context) {
  if (context == nullptr) return;
  handshakes_.set_context(std::move(context), context_->config.tls_client_certificates_required);
}

void Frontend::sweep() {
  const std::uint64_t now = uv_now(loop_);
  handshakes_.sweep(now);
  context_->deadline_log.tick(now);
  if (flow_.paused()) flow_.update_accepting();  // the headroom may have room again
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

std::vector<std::shared_ptr<ClientSession>> Frontend::sessions_in_turn() {
  std::vector<std::shared_ptr<ClientSession>> out;
  out.reserve(sessions_.size());
  for (auto& [id, s] : sessions_) out.push_back(s);
  if (!out.empty()) {
    std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(flow_.take_turn() % out.size()), out.end());
  }
  return out;
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

void Frontend::set_users(std::shared_ptr<const sasl::UserStore> users) {
  context_->users = std::move(users);
}

void Frontend::set_upstream_compression(CompressionCodec codec) {
  context_->config.upstream_compression = codec;
}

}  // namespace pp
