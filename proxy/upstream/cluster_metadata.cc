#include "proxy/upstream/cluster_metadata.h"

#include <algorithm>

namespace pp::upstream {

std::string BrokerEndpoint::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

namespace {

bool leader_changed(const PartitionMetadata& old, const PartitionMetadata& now) {
  return old.leader_id != now.leader_id || now.leader_epoch > old.leader_epoch;
}

// An epoch lower than the known one: a broker with an older view answered.
bool stale(const PartitionMetadata& old, const PartitionMetadata& now) {
  return old.leader_epoch >= 0 && now.leader_epoch >= 0 && now.leader_epoch < old.leader_epoch;
}

}  // namespace

MetadataChanges ClusterMetadata::apply(const MetadataResponse& response) {
  MetadataChanges changes;
  // Metadata v13's top-level error (KIP-1102): the answer describes nothing,
  // and its empty broker list must not replace the known one.
  if (response.error_code != ErrorCode::kNone) return changes;
  ++responses_;
  apply_brokers(response.brokers, changes);
  for (const MetadataResponseTopic& t : response.topics) {
    if (!t.name || t.name->empty()) continue;  // we ask by name, so answers carry names
    changes.topics.push_back(*t.name);
    apply_topic(t, changes);
  }
  return changes;
}

// A response lists every live broker: the set is replaced.
void ClusterMetadata::apply_brokers(std::span<const MetadataResponseBroker> listed, MetadataChanges& changes) {
  std::map<std::int32_t, BrokerEndpoint> brokers;
  for (const MetadataResponseBroker& b : listed) {
    brokers[b.node_id] = BrokerEndpoint{b.node_id, b.host, b.port, b.rack};
  }
  for (const auto& [id, endpoint] : brokers) {
    auto old = brokers_.find(id);
    if (old == brokers_.end()) {
      changes.brokers_added.push_back(id);
    } else if (!old->second.same_address(endpoint)) {
      changes.brokers_moved.push_back(id);
    }
  }
  for (const auto& [id, endpoint] : brokers_) {
    if (!brokers.contains(id)) changes.brokers_removed.push_back(id);
  }
  brokers_ = std::move(brokers);
}

void ClusterMetadata::apply_topic(const MetadataResponseTopic& t, MetadataChanges& changes) {
  auto found = topics_.find(*t.name);
  const TopicMetadata* old = found == topics_.end() ? nullptr : &found->second;

  TopicMetadata now;
  now.error = t.error_code;
  now.topic_id = t.topic_id;
  if (now.topic_id.is_zero() && old) now.topic_id = old->topic_id;
  const bool recreated = old && !old->topic_id.is_zero() && !t.topic_id.is_zero() && old->topic_id != t.topic_id;
  if (recreated) changes.recreated_topics.push_back(*t.name);

  // A topic-level error (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE
  // while it is being created, ...) comes with no usable partitions.
  if (t.error_code == ErrorCode::kNone) {
    std::int32_t count = 0;
    for (const auto& p : t.partitions) {
      if (p.partition_index >= 0 && p.partition_index <= kMaxPartitionIndex) {
        count = std::max(count, p.partition_index + 1);
      }
    }
    now.partitions.resize(static_cast<std::size_t>(count));
    for (const MetadataResponsePartition& p : t.partitions) {
      if (p.partition_index < 0 || p.partition_index > kMaxPartitionIndex) {
        ++changes.out_of_range_partitions;
        continue;
      }
      const auto index = static_cast<std::size_t>(p.partition_index);
      const PartitionMetadata fresh{p.error_code, p.leader_id, p.leader_epoch};
      const PartitionMetadata* known =
          old && !recreated && index < old->partitions.size() ? &old->partitions[index] : nullptr;
      if (known && stale(*known, fresh)) {
        now.partitions[index] = *known;
        ++changes.stale_partitions;
        continue;
      }
      now.partitions[index] = fresh;
      if (known && leader_changed(*known, fresh)) {
        changes.leader_changes.push_back(
            {*t.name, p.partition_index, known->leader_id, fresh.leader_id, known->leader_epoch, fresh.leader_epoch});
      }
    }
  }
  topics_[*t.name] = std::move(now);
}

std::vector<std::int32_t> ClusterMetadata::learn_brokers(std::span<const NodeEndpoint> endpoints) {
  std::vector<std::int32_t> moved;
  for (const NodeEndpoint& e : endpoints) {
    BrokerEndpoint endpoint{e.node_id, e.host, e.port, e.rack};
    auto found = brokers_.find(e.node_id);
    if (found != brokers_.end() && !found->second.same_address(endpoint)) moved.push_back(e.node_id);
    brokers_[e.node_id] = std::move(endpoint);
  }
  return moved;
}

bool ClusterMetadata::update_partition_leadership(std::string_view topic, std::int32_t partition,
                                                  std::int32_t leader_id,
                                                  std::int32_t leader_epoch) {
  if (leader_id < 0 || leader_epoch < 0 || partition < 0) return false;
  auto found = topics_.find(topic);
  if (found == topics_.end()) return false;
  auto& partitions = found->second.partitions;
  if (static_cast<std::size_t>(partition) >= partitions.size()) return false;
  PartitionMetadata& p = partitions[static_cast<std::size_t>(partition)];
  if (p.leader_epoch >= 0 && leader_epoch <= p.leader_epoch) return false;
  p = PartitionMetadata{ErrorCode::kNone, leader_id, leader_epoch};
  return true;
}

const BrokerEndpoint* ClusterMetadata::broker(std::int32_t node_id) const {
  auto found = brokers_.find(node_id);
  return found == brokers_.end() ? nullptr : &found->second;
}

const TopicMetadata* ClusterMetadata::topic(std::string_view name) const {
  auto found = topics_.find(name);
  return found == topics_.end() ? nullptr : &found->second;
}

std::optional<std::string> ClusterMetadata::topic_name(const Uuid& topic_id) const {
  if (topic_id.is_zero()) return std::nullopt;
  for (const auto& [name, t] : topics_) {
    if (t.topic_id == topic_id) return name;
  }
  return std::nullopt;
}

}  // namespace pp::upstream
