#include "proxy/upstream/broker_directory.h"

#include <algorithm>

namespace pp::upstream {

std::string BrokerEndpoint::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

namespace {

bool in_range(std::int32_t index) {
  return index >= 0 && index <= kMaxPartitionIndex;
}

TopicLeadership read_topic(const MetadataResponseTopic& t, std::size_t& out_of_range) {
  TopicLeadership out;
  out.error = t.error_code;
  out.topic_id = t.topic_id;
  if (t.error_code != ErrorCode::kNone) return out;
  std::int32_t count = 0;
  for (const auto& p : t.partitions) {
    if (in_range(p.partition_index)) count = std::max(count, p.partition_index + 1);
  }
  out.partitions.resize(static_cast<std::size_t>(count),
                        PartitionLeadership{ErrorCode::kUnknownTopicOrPartition, -1, -1});
  for (const MetadataResponsePartition& p : t.partitions) {
    if (!in_range(p.partition_index)) {
      ++out_of_range;
      continue;
    }
    out.partitions[static_cast<std::size_t>(p.partition_index)] =
        PartitionLeadership{p.error_code, p.leader_id, p.leader_epoch};
  }
  return out;
}

}  // namespace

TopicsRead read_topics(const MetadataResponse& response, const std::set<std::string>* asked) {
  TopicsRead read;
  for (const MetadataResponseTopic& t : response.topics) {
    if (!t.name || t.name->empty()) continue;
    if (asked && !asked->contains(*t.name)) {
      ++read.unasked_topics;
      continue;
    }
    read.update.topics.emplace_back(*t.name, read_topic(t, read.out_of_range_partitions));
  }
  return read;
}

BrokerChanges BrokerDirectory::apply(std::span<const MetadataResponseBroker> listed) {
  BrokerChanges changes;
  std::map<std::int32_t, BrokerEndpoint> brokers;
  for (const MetadataResponseBroker& b : listed) {
    brokers[b.node_id] = BrokerEndpoint{b.node_id, b.host, b.port, b.rack};
  }
  for (const auto& [id, endpoint] : brokers) {
    auto old = brokers_.find(id);
    if (old == brokers_.end()) {
      changes.added.push_back(id);
    } else if (!old->second.same_address(endpoint)) {
      changes.moved.push_back(id);
    }
  }
  for (const auto& [id, endpoint] : brokers_) {
    if (!brokers.contains(id)) changes.removed.push_back(id);
  }
  brokers_ = std::move(brokers);
  return changes;
}

std::vector<std::int32_t> BrokerDirectory::learn(std::span<const NodeEndpoint> endpoints) {
  std::vector<std::int32_t> moved;
  for (const NodeEndpoint& e : endpoints) {
    BrokerEndpoint endpoint{e.node_id, e.host, e.port, e.rack};
    auto found = brokers_.find(e.node_id);
    if (found != brokers_.end() && !found->second.same_address(endpoint)) moved.push_back(e.node_id);
    brokers_[e.node_id] = std::move(endpoint);
  }
  return moved;
}

const BrokerEndpoint* BrokerDirectory::find(std::int32_t node_id) const {
  auto found = brokers_.find(node_id);
  return found == brokers_.end() ? nullptr : &found->second;
}

}  // namespace pp::upstream
