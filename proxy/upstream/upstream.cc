#include "proxy/upstream/upstream.h"

#include <algorithm>
#include <utility>

#include "proxy/upstream/log.h"

namespace pp::upstream {

namespace {

constexpr std::uint64_t kMetadataSpacingMs = 100;  // Java's retry.backoff.ms
constexpr std::uint64_t kLeaderDownRefreshMaxMs = 1000;

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
      topic_limits_(loop, static_cast<std::uint64_t>(std::max(config_.metadata_max_age_ms, 1)), *this) {}

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
  topic_limits_.close();
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
      topic_limits_.ask();
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

std::optional<std::int16_t> Upstream::highest_negotiated_version(ApiKey key) const {
  std::optional<std::int16_t> highest;
  auto consider = [&](const BrokerConnection& c) {
    if (!c.ready()) return;
    const auto v = c.versions().version(key);
    if (v && (!highest || *v > *highest)) highest = v;
  };
  for (const auto& [id, c] : connections_) consider(*c);
  for (const auto& c : bootstrap_) consider(*c);
  return highest;
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

// ---- the requests it sends and the metadata refresh policy ----

void Upstream::send_produce(std::int32_t node, const ProduceRequest& request, std::int16_t version, ProduceDone done) {
  auto fail = [&](ErrorCode error) {
    deferred_.post([done = std::move(done), version, error] { done(version, std::unexpected(error)); });
  };
  BrokerConnection* c = closed_ ? nullptr : find_connection(node);
  if (!c || !c->ready()) return fail(ErrorCode::kNetworkException);
  // Kafka sends no answer to acks=0, so the request would only time out
  // and close the connection; the pipeline always sends acks=-1.
  if (request.acks == 0) return fail(ErrorCode::kInvalidRequiredAcks);
  const std::int16_t negotiated = c->versions().version(ApiKey::kProduce).value_or(-1);
  if (negotiated < 0) return fail(ErrorCode::kUnsupportedVersion);
  if (version > negotiated) {
    log().debug("{}: Produce v{} asked, v{} negotiated; sending v{}", c->describe(), version, negotiated, negotiated);
    version = negotiated;
  }
  // v13+ (KIP-516) answers with topic ids only; give them their names back.
  std::vector<std::pair<Uuid, std::string>> names;
  if (version >= kProduceTopicIdVersion) {
    for (const ProduceTopicData& t : request.topic_data) names.emplace_back(t.topic_id, t.name);
  }
  c->send(request, version,
          make_sink<ProduceResponse>(
              [names = std::move(names), done = std::move(done), version](ProduceResult result) mutable {
                if (result) {
                  for (ProduceTopicResponse& t : result->responses) {
                    auto it =
                        std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == t.topic_id; });
                    if (it != names.end() && t.name.empty()) t.name = it->second;
                  }
                }
                done(version, std::move(result));
              }));
}

void Upstream::send_init_producer_id(const InitProducerIdRequest& request,
                                     std::function<void(InitProducerIdResult)> done) {
  if (closed_) {
    fail_later<InitProducerIdResult>(std::move(done), ErrorCode::kNetworkException);
    return;
  }
  init_waiting_.push_back({request, std::move(done), now() + static_cast<std::uint64_t>(config_.request_timeout_ms)});
  // Never inside this call: a ready broker answers later anyway, and a
  // missing one makes flush_init wait.
  deferred_.post([this] { flush_init(); });
}

void Upstream::flush_init() {
  while (!init_waiting_.empty() && !closed_) {
    BrokerConnection* c = pick_ready(ApiKey::kInitProducerId);
    if (!c) {
      ensure_some_connecting();
      expire_init();
      return;
    }
    InitWaiting w = std::move(init_waiting_.front());
    init_waiting_.pop_front();
    const std::int16_t version = *c->versions().version(ApiKey::kInitProducerId);
    log().debug("{}: InitProducerId v{}", c->describe(), version);
    c->send(w.request, version, make_sink<InitProducerIdResponse>(std::move(w.done)));
  }
  init_timer_.stop();
}

void Upstream::expire_init() {
  const std::uint64_t t = now();
  while (!init_waiting_.empty() && init_waiting_.front().deadline_ms <= t) {
    log().warn("upstream: no broker ready for InitProducerId within {} ms", config_.request_timeout_ms);
    init_waiting_.front().done(std::unexpected(ErrorCode::kRequestTimedOut));
    init_waiting_.pop_front();
  }
  if (init_waiting_.empty()) {
    init_timer_.stop();
    return;
  }
  const std::uint64_t deadline = init_waiting_.front().deadline_ms;
  init_timer_.start(deadline > t ? deadline - t : 0, 0, [this] { expire_init(); });
}

void Upstream::request_metadata(const std::vector<std::string>& topics, bool allow_auto_topic_creation) {
  if (allow_auto_topic_creation && !closed_) create_wanted_.insert(topics.begin(), topics.end());
  request_metadata(topics);
}

void Upstream::request_metadata(const std::vector<std::string>& topics) {
  if (closed_) return;
  for (const std::string& t : topics) {
    if (topics_.insert(t).second) new_topic_ = true;
  }
  metadata_wanted_ = true;
  post_flush();
}

void Upstream::forget_topics(const std::vector<std::string>& topics) {
  for (const std::string& t : topics) {
    topics_.erase(t);
    create_wanted_.erase(t);
    topic_limits_.forget(t);
  }
}

void Upstream::post_flush() {
  if (flush_posted_) return;
  flush_posted_ = true;
  // On the next iteration: every request_metadata of this one is in by then.
  deferred_.post([this] {
    flush_posted_ = false;
    flush_metadata();
  });
}

void Upstream::flush_metadata() {
  if (closed_ || !metadata_wanted_ || metadata_in_flight_) return;
  const std::uint64_t t = now();
  if (t < next_metadata_ms_ && !new_topic_) {
    if (!metadata_timer_.active()) {
      metadata_timer_.start(next_metadata_ms_ - t, 0, [this] { flush_metadata(); });
    }
    return;
  }
  BrokerConnection* c = pick_ready(ApiKey::kMetadata);
  if (!c) {
    ensure_some_connecting();  // a connection's kReady event flushes again
    return;
  }
  const std::int16_t version = *c->versions().version(ApiKey::kMetadata);
  if (topics_.empty() && version == 0) {
    metadata_wanted_ = false;  // v0 reads an empty list as "every topic"
    return;
  }
  MetadataRequest request;
  // v4+: one flag for the whole request. Topics a client asked to create go
  // alone, first, with it set; every other request has it off, so neither a
  // topic asked about without creation nor a deleted one is ever created.
  const bool creating = !create_wanted_.empty();
  const std::set<std::string> asked = creating ? std::exchange(create_wanted_, {}) : topics_;
  request.allow_auto_topic_creation = creating;
  request.topics.emplace();
  for (const std::string& name : asked) {
    MetadataRequestTopic topic;
    topic.name = name;
    request.topics->push_back(std::move(topic));
  }
  metadata_in_flight_ = true;
  metadata_wanted_ = creating && asked.size() < topics_.size();  // the others follow
  new_topic_ = false;
  metadata_timer_.stop();
  ++metadata_requests_sent_;
  log().debug("{}: Metadata v{} for {} topics{}", c->describe(), version, asked.size(),
              creating ? ", creating them if the cluster auto-creates" : "");
  c->send(request, version, make_sink<MetadataResponse>([this](std::expected<MetadataResponse, ErrorCode> result) {
            on_metadata_response(std::move(result));
          }));
}

void Upstream::on_metadata_response(std::expected<MetadataResponse, ErrorCode> result) {
  metadata_in_flight_ = false;
  if (closed_) return;
  const std::uint64_t t = now();
  // Metadata v13 (KIP-1102): a top-level error (REBOOTSTRAP_REQUIRED, ...)
  // means the answer describes nothing, its empty broker list included, so it
  // must not retire every broker: it is retried like a failed request.
  if (result && result->error_code != ErrorCode::kNone) {
    log().warn("upstream: Metadata answered {}; retrying", error_name(result->error_code));
    result = std::unexpected(result->error_code);
  }
  if (!result) {
    ++metadata_failures_;
    const std::uint64_t wait = metadata_backoff_.backoff_ms(metadata_failures_);
    log().debug("upstream: Metadata failed ({}); retrying in {} ms", error_name(result.error()), wait);
    next_metadata_ms_ = t + wait;
    metadata_wanted_ = true;
    new_topic_ = false;  // the retry waits its backoff even for new topics
    post_flush();
    return;
  }
  metadata_failures_ = 0;
  next_metadata_ms_ = t + kMetadataSpacingMs;
  apply_metadata(*result);
  // While a leader's connection is down, the cluster has not yet elected a
  // new one (a broker's session must time out first, seconds): ask again,
  // backing off from 100 ms to 1 s, until the answer names a live leader.
  // Without this, partitions of a killed broker waited for metadata_max_age_ms.
  if (leader_unreachable()) {
    next_metadata_ms_ = t + backoff_ms(kMetadataSpacingMs, kLeaderDownRefreshMaxMs, leader_down_refreshes_++);
    metadata_wanted_ = true;
  } else {
    leader_down_refreshes_ = 0;
  }
  max_age_timer_.start(static_cast<std::uint64_t>(std::max(config_.metadata_max_age_ms, 1)), 0, [this] {
    metadata_wanted_ = true;
    flush_metadata();
  });
  if (metadata_wanted_) post_flush();
}

// Brokers here; the topics go to the pipeline, which says (through
// set_leaders_in_use, before this returns) which brokers lead them.
void Upstream::apply_metadata(const MetadataResponse& response) {
  ++metadata_responses_;
  const BrokerChanges changes = brokers_.apply(response.brokers);
  log_broker_changes(changes);
  for (std::int32_t id : changes.removed) retire(id);
  for (std::int32_t id : changes.moved) retire(id);
  // Brokers are known now: the bootstrap connections can go once idle.
  if (!brokers_.all().empty()) {
    for (auto& b : bootstrap_) {
      if (b->wanted()) b->retire();
    }
  }
  TopicsRead read = read_topics(response, &topics_);
  if (read.out_of_range_partitions > 0) {
    log().warn("upstream: ignored {} partitions with an index below 0 or above {} (a broken broker?)",
               read.out_of_range_partitions, kMaxPartitionIndex);
  }
  if (read.unasked_topics > 0) {
    log().warn("upstream: ignored {} topics the Metadata answer names but the proxy did not ask about",
               read.unasked_topics);
  }
  if (on_metadata_ && !read.update.topics.empty()) on_metadata_(read.update);
  connect_to_leaders();
  topic_limits_.on_metadata(read.update);
}

void Upstream::log_broker_changes(const BrokerChanges& changes) const {
  for (std::int32_t id : changes.added) {
    log().info("upstream: broker {} at {}", id, brokers_.find(id)->to_string());
  }
}

// Open the way to every leader of the topics in use before the first batch.
void Upstream::connect_to_leaders() {
  for (std::int32_t node : leaders_in_use_) {
    if (BrokerConnection* c = connection_for(node)) c->connect();
  }
}

// A leader of a topic in use whose connection failed and has not come back.
bool Upstream::leader_unreachable() const {
  for (const auto& [id, c] : connections_) {
    if (!c->ready() && c->consecutive_failures() > 0 && leads_topics_in_use(id)) return true;
  }
  return false;
}

}  // namespace pp::upstream
