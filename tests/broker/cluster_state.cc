#include "tests/broker/cluster_state.h"

#include <algorithm>

#include "tests/broker/log.h"

namespace pp::test_broker {

ClusterState::ClusterState(const TestClusterOptions& options, std::uint64_t seed)
    : options_(options), seed_(seed), rng_(seed) {
  faults_.rtt_ms = options.rtt_ms;
  for (int i = 1; i <= options.brokers; ++i) {
    BrokerInfo b;
    b.id = i;
    b.host = options.host;
    b.legacy = i > options.brokers - options.legacy_brokers;
    brokers_.push_back(b);
  }
  for (const auto& spec : options.topics) {
    if (auto st = create_topic(spec); !st) log().error("{}", st.error());
  }
}

BrokerInfo* ClusterState::broker(BrokerId id) {
  for (auto& b : brokers_) {
    if (b.id == id) return &b;
  }
  return nullptr;
}

const BrokerInfo* ClusterState::broker(BrokerId id) const {
  return const_cast<ClusterState*>(this)->broker(id);
}

BrokerId ClusterState::controller() const {
  for (const auto& b : brokers_) {
    if (b.up) return b.id;
  }
  return -1;
}

Topic* ClusterState::topic(std::string_view name) {
  for (auto& t : topics_) {
    if (t->name == name) return t.get();
  }
  return nullptr;
}

Topic* ClusterState::topic(const Uuid& id) {
  for (auto& t : topics_) {
    if (t->id == id) return t.get();
  }
  return nullptr;
}

Partition* ClusterState::partition(std::string_view topic_name, std::int32_t index) {
  Topic* t = topic(topic_name);
  if (!t || index < 0 || index >= static_cast<std::int32_t>(t->partitions.size())) return nullptr;
  return t->partitions[static_cast<std::size_t>(index)].get();
}

Status ClusterState::create_topic(const TopicSpec& spec) {
  TestClusterOptions check;
  check.brokers = options_.brokers;
  check.topics = {spec};
  if (auto v = validate(check); !v) return v;
  if (topic(spec.name)) return std::unexpected("topic '" + spec.name + "' already exists");

  auto t = std::make_unique<Topic>();
  t->name = spec.name;
  t->retain = spec.retain;
  // Uuid.randomUuid: random, never the zero (or metadata) id.
  do {
    for (auto& b : t->id.bytes) b = static_cast<std::uint8_t>(rng_());
  } while (t->id.is_zero() || topic(t->id));
  for (int i = 0; i < spec.partitions; ++i) add_partition(*t);
  topics_.push_back(std::move(t));
  return {};
}

void ClusterState::add_partition(Topic& t) {
  auto p = std::make_unique<Partition>();
  p->topic = t.name;
  p->topic_id = t.id;
  p->index = static_cast<std::int32_t>(t.partitions.size());
  p->topic_retain = t.retain;
  p->log.set_retention_bytes(options_.retain_log_bytes);
  // Leaders spread round-robin across brokers and topics, as Kafka's
  // replica assignment does.
  p->leader = brokers_[partitions_created_++ % brokers_.size()].id;
  if (!broker(p->leader)->up) p->leader = next_up_broker_after(p->leader);
  p->producers.reset(effective_retain(*p));
  t.partitions.push_back(std::move(p));
}

Status ClusterState::delete_topic(std::string_view name) {
  auto it = std::find_if(topics_.begin(), topics_.end(), [&](const auto& t) { return t->name == name; });
  if (it == topics_.end()) return std::unexpected("no topic '" + std::string(name) + "'");
  log().info("topic '{}' deleted", name);
  deleted_topics_.push_back(std::move(*it));
  topics_.erase(it);
  return {};
}

Status ClusterState::create_partitions(std::string_view name, int total) {
  Topic* t = topic(name);
  if (!t) return std::unexpected("no topic '" + std::string(name) + "'");
  const auto have = static_cast<int>(t->partitions.size());
  if (total <= have || total > 10000) {
    return std::unexpected("topic '" + t->name + "' has " + std::to_string(have) + " partitions; " +
                           std::to_string(total) + " is not more (or over 10000)");
  }
  while (static_cast<int>(t->partitions.size()) < total) add_partition(*t);
  log().info("topic '{}' now has {} partitions", name, total);
  return {};
}

int ClusterState::retain_on(BrokerId id, const Partition& p) const {
  if (options_.no_state_rule == NoStateRule::kKafka0_11) return 1;
  const BrokerInfo* b = broker(id);
  if (b && b->legacy) return kLegacyRetain;
  return p.topic_retain;
}

BrokerId ClusterState::next_up_broker_after(BrokerId id) const {
  const auto n = brokers_.size();
  std::size_t start = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (brokers_[i].id == id) start = i;
  }
  for (std::size_t k = 1; k <= n; ++k) {
    const auto& b = brokers_[(start + k) % n];
    if (b.up) return b.id;
  }
  return -1;
}

void ClusterState::rebuild_producer_state(Partition& p) {
  // A follower builds producer state from the batches it replicated, without
  // validation (ProducerStateManager with AppendOrigin.REPLICATION); replaying
  // our log gives exactly the state the new leader would have.
  p.producers.reset(effective_retain(p));
  for (const auto& b : p.log.batches()) {
    if (b.producer_id < 0) continue;
    BatchProducerInfo info{b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta, b.max_timestamp};
    p.producers.on_append(info, b.last_offset());
  }
}

Status ClusterState::move_leader(Partition& p, BrokerId to, std::size_t truncate_batches) {
  if (to < 0) {
    p.leader = -1;  // offline, as in a broker's controlled shutdown: LEADER_NOT_AVAILABLE
    ++p.leader_epoch;
    return {};
  }
  const BrokerInfo* b = broker(to);
  if (!b) return std::unexpected("no broker " + std::to_string(to));
  if (!b->up) return std::unexpected("broker " + std::to_string(to) + " is down");
  if (truncate_batches > 0) {
    log().info("{}-{}: truncating the last {} batch(es) on the move to broker {}", p.topic, p.index, truncate_batches,
               to);
    p.log.truncate_last_batches(truncate_batches);
  }
  p.leader = to;
  ++p.leader_epoch;
  log().debug("{}-{}: leader is now broker {} (leader epoch {})", p.topic, p.index, to, p.leader_epoch);
  rebuild_producer_state(p);
  return {};
}

void ClusterState::flip_leaders() {
  for (auto& t : topics_) {
    for (auto& p : t->partitions) {
      const BrokerId next = next_up_broker_after(p->leader < 0 ? brokers_.back().id : p->leader);
      if (next >= 0) (void)move_leader(*p, next);
    }
  }
}

Status ClusterState::set_broker_up(BrokerId id, bool up) {
  BrokerInfo* b = broker(id);
  if (!b) return std::unexpected("no broker " + std::to_string(id));
  if (b->up == up) return {};
  b->up = up;
  for (auto& t : topics_) {
    for (auto& p : t->partitions) {
      if (!up && p->leader == id) {
        const BrokerId next = next_up_broker_after(id);
        if (next >= 0) {
          (void)move_leader(*p, next);
        } else {
          p->leader = -1;  // offline: Metadata answers LEADER_NOT_AVAILABLE
          ++p->leader_epoch;
        }
      } else if (up && p->leader < 0) {
        (void)move_leader(*p, id);
      }
    }
  }
  return {};
}

ClusterState::ProducerIdGrant ClusterState::init_producer_id(std::int64_t producer_id, std::int16_t producer_epoch,
                                                             std::int16_t version) {
  auto fresh = [this] {
    const std::int64_t id = next_producer_id_++;
    producer_epochs_[id] = 0;
    return ProducerIdGrant{ErrorCode::kNone, id, 0};
  };
  if (producer_id < 0 || options_.init_producer_id_mode == InitProducerIdMode::kAlwaysNewId) {
    return fresh();
  }
  // KIP-360: a producer that names its current id and epoch gets the epoch
  // bumped, so it can reset its sequences without losing its identity.
  auto it = producer_epochs_.find(producer_id);
  if (it == producer_epochs_.end()) return {ErrorCode::kInvalidProducerIdMapping, -1, -1};
  if (it->second != producer_epoch) {
    return {version >= 4 ? ErrorCode::kProducerFenced : ErrorCode::kInvalidProducerEpoch, -1, -1};
  }
  if (it->second == INT16_MAX) return fresh();  // epoch exhausted: a new id (KAFKA-20090)
  ++it->second;
  return {ErrorCode::kNone, producer_id, it->second};
}

}  // namespace pp::test_broker
