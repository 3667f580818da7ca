#include "proxy/upstream/upstream.h"

#include <algorithm>
#include <utility>

#include "proxy/upstream/log.h"

namespace pp::upstream {

namespace {

std::optional<net::HostPort> endpoint_address(const BrokerEndpoint& b) {
  if (b.port < 0 || b.port > 65535 || b.host.empty()) return std::nullopt;
  return net::HostPort{b.host, static_cast<std::uint16_t>(b.port)};
}

}  // namespace

Upstream::Upstream(uv_loop_t* loop, UpstreamConfig config, MetadataListener on_metadata)
    : loop_(loop),
      config_(std::move(config)),
      on_metadata_(std::move(on_metadata)),
      deferred_(loop),
      metadata_backoff_(static_cast<std::uint64_t>(std::max(config_.reconnect_backoff_ms, 1)),
                        static_cast<std::uint64_t>(std::max(config_.reconnect_backoff_max_ms, 1))),
      metadata_timer_(loop),
      max_age_timer_(loop),
      init_timer_(loop),
      message_limits_(static_cast<std::uint64_t>(std::max(config_.metadata_max_age_ms, 1))),
      limits_retry_timer_(loop) {}

Upstream::~Upstream() = default;

std::expected<void, std::string> Upstream::start() {
  if (config_.bootstrap_servers.empty()) return std::unexpected("bootstrap_servers is empty");
  std::vector<net::HostPort> addresses;
  for (const std::string& entry : config_.bootstrap_servers) {
    auto hp = net::parse_host_port(entry);
    if (!hp) return std::unexpected("bootstrap server '" + entry + "': " + hp.error());
    addresses.push_back(std::move(*hp));
  }
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    // Negative ids, as Java numbers bootstrap nodes: never a real broker's.
    bootstrap_.push_back(make_connection(-1 - static_cast<std::int32_t>(i), addresses[i]));
    bootstrap_.back()->connect();
  }
  log().info("upstream: bootstrapping from {}", fmt::join(config_.bootstrap_servers, ","));
  metadata_wanted_ = true;
  post_flush();
  return {};
}

void Upstream::close() {
  if (closed_) return;
  closed_ = true;
  metadata_timer_.stop();
  max_age_timer_.stop();
  init_timer_.stop();
  limits_retry_timer_.stop();
  for (auto& [id, c] : connections_) c->stop("upstream closing");
  for (auto& c : bootstrap_) c->stop("upstream closing");
  for (auto& c : retired_) c->stop("upstream closing");
  while (!init_waiting_.empty()) {
    fail_later<InitProducerIdResult>(std::move(init_waiting_.front().done), ErrorCode::kNetworkException);
    init_waiting_.pop_front();
  }
}

std::unique_ptr<BrokerConnection> Upstream::make_connection(std::int32_t node, net::HostPort address) {
  BrokerConnectionOptions options;
  options.client_id = config_.client_id;
  options.request_timeout_ms = config_.request_timeout_ms;
  options.max_in_flight = config_.max_in_flight_per_connection;
  options.reconnect_backoff_ms = config_.reconnect_backoff_ms;
  options.reconnect_backoff_max_ms = config_.reconnect_backoff_max_ms;
  options.connect_timeout_ms = std::min(config_.request_timeout_ms, 10000);
  options.security = config_.security;
  if (config_.observer != nullptr) {
    options.on_auth_failure = [observer = config_.observer](const BrokerConnection& c, std::string_view reason) {
      observer->on_auth_failure(c.address().to_string(), reason);
    };
  }
  options.sasl = config_.sasl;
  options.on_reauthenticated = config_.on_reauthenticated;
  return std::make_unique<BrokerConnection>(
      loop_, deferred_, node, std::move(address), std::move(options),
      [this](BrokerConnection& c, BrokerConnection::Event e) { on_connection_event(c, e); });
}

BrokerConnection* Upstream::find_connection(std::int32_t node) const {
  auto found = connections_.find(node);
  return found == connections_.end() ? nullptr : found->second.get();
}

BrokerConnection* Upstream::connection_for(std::int32_t node) {
  if (closed_ || node < 0) return nullptr;
  if (BrokerConnection* c = find_connection(node)) return c;
  const BrokerEndpoint* endpoint = brokers_.find(node);
  if (!endpoint) return nullptr;
  auto address = endpoint_address(*endpoint);
  if (!address) return nullptr;
  auto [it, inserted] = connections_.emplace(node, make_connection(node, std::move(*address)));
  return it->second.get();
}

void Upstream::on_connection_event(BrokerConnection& c, BrokerConnection::Event e) {
  switch (e) {
    case BrokerConnection::Event::kReady:
      flush_metadata();
      flush_init();
      // The Metadata answer that named the topics may have come before any
      // broker of the cluster was ready (the bootstrap one retired by it).
      ask_topic_limits();
      [[fallthrough]];
    case BrokerConnection::Event::kThrottleEnded:
      if (c.node_id() >= 0 && on_node_ready_ && !c.retiring()) on_node_ready_(c.node_id());
      break;
    case BrokerConnection::Event::kDisconnected:
      // Not here: the connection is the one calling us.
      if (!retired_.empty()) deferred_.post([this] { sweep_retired(); });
      // A leader lost: ask who leads now (Java's NetworkClient does on every
      // disconnect); on_metadata_response keeps asking until it is known.
      if (c.node_id() >= 0 && !c.retiring() && leads_topics_in_use(c.node_id())) {
        metadata_wanted_ = true;
        post_flush();
      }
      break;
  }
}

void Upstream::sweep_retired() {
  std::erase_if(retired_, [](const std::unique_ptr<BrokerConnection>& c) {
    return c->state() == BrokerConnection::State::kDisconnected && !c->wanted();
  });
}

void Upstream::retire(std::int32_t node) {
  auto found = connections_.find(node);
  if (found == connections_.end()) return;
  log().info("{}: left the cluster metadata or moved; closing once idle", found->second->describe());
  retired_.push_back(std::move(found->second));
  connections_.erase(found);
  retired_.back()->retire();
}

BrokerConnection* Upstream::pick_ready(ApiKey key) const {
  BrokerConnection* best = nullptr;
  auto consider = [&](BrokerConnection* c) {
    if (!c->ready() || c->retiring() || !c->versions().version(key)) return;
    if (!best || c->in_flight() < best->in_flight()) best = c;
  };
  for (const auto& [id, c] : connections_) consider(c.get());
  if (!best) {
    for (const auto& c : bootstrap_) consider(c.get());
  }
  return best;
}

void Upstream::ensure_some_connecting() {
  if (closed_) return;
  // Known brokers first; they back off on their own after failures.
  bool any_healthy = false;
  for (const auto& [id, endpoint] : brokers_.all()) {
    if (BrokerConnection* c = connection_for(id)) {
      c->connect();
      if (c->consecutive_failures() == 0) any_healthy = true;
    }
  }
  // Re-bootstrap when metadata names no broker, or none of them answers.
  if (!any_healthy) {
    for (auto& c : bootstrap_) c->connect();
  }
}

bool Upstream::can_send_produce(std::int32_t node) {
  BrokerConnection* c = connection_for(node);
  if (!c) return false;
  c->connect();
  return c->can_send_produce();
}

std::int16_t Upstream::produce_version(std::int32_t node) {
  BrokerConnection* c = find_connection(node);
  if (!c || !c->ready()) return -1;
  return c->versions().version(ApiKey::kProduce).value_or(-1);
}

std::optional<std::int16_t> Upstream::negotiated_version(std::int32_t node, ApiKey key) const {
  BrokerConnection* c = find_connection(node);
  if (!c || !c->ready()) return std::nullopt;
  return c->versions().version(key);
}

void Upstream::reset_connection(std::int32_t node) {
  if (BrokerConnection* c = find_connection(node)) c->reset("reset by the pipeline");
}

void Upstream::learn_brokers(const std::vector<NodeEndpoint>& endpoints) {
  for (std::int32_t moved : brokers_.learn(endpoints)) retire(moved);
}

void Upstream::set_request_timeout_ms(int ms) {
  config_.request_timeout_ms = ms;
  for (auto& [id, c] : connections_) c->set_request_timeout_ms(ms);
  for (auto& c : bootstrap_) c->set_request_timeout_ms(ms);
  for (auto& c : retired_) c->set_request_timeout_ms(ms);
}

void Upstream::set_security(const TransportSecurity& security) {
  config_.security = security;
  for (auto& [id, c] : connections_) c->set_security(security);
  for (auto& c : bootstrap_) c->set_security(security);
}

void Upstream::set_leaders_in_use(const std::set<std::int32_t>& nodes) {
  leaders_in_use_ = nodes;
  connect_to_leaders();
}

std::vector<BrokerStatus> Upstream::broker_status() const {
  std::vector<BrokerStatus> out;
  out.reserve(connections_.size());
  for (const auto& [id, c] : connections_) {
    out.push_back(BrokerStatus{id, c->address().to_string(), c->ready(), c->in_flight(), c->produce_requests_sent(),
                               c->ready() ? c->versions().version(ApiKey::kProduce).value_or(-1) : std::int16_t{-1}});
  }
  return out;
}

}  // namespace pp::upstream
