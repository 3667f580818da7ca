// The cluster as the last Metadata responses described it: brokers (node id
// -> endpoint) and, per topic, its id and each partition's leader and leader
// epoch. Pure data and rules, no sockets, so the rules are unit-tested:
//
// - A partition whose leader epoch is lower than the one known is stale and
//   ignored (Java's Metadata.updateLatestMetadata): a lagging broker may
//   answer after a fresher one.
// - A leader change is a new leader id or a higher leader epoch. Brokers
//   below Metadata v7 report no epochs (-1, librdkafka's mock), so there the
//   leader id alone tells.
// - A different non-zero topic id means the topic was deleted and created
//   again (KIP-516): its partitions are taken as they come, epochs and all.
// - A response without topic ids (Metadata < v10) keeps the id known, as
//   Java does, so a later id change is still seen.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/protocol/types.h"

namespace pp::upstream {

struct BrokerEndpoint {
  std::int32_t node_id = -1;
  std::string host;
  std::int32_t port = 0;
  std::optional<std::string> rack;

  bool same_address(const BrokerEndpoint& o) const { return host == o.host && port == o.port; }
  std::string to_string() const;
};

struct PartitionMetadata {
  ErrorCode error = ErrorCode::kUnknownTopicOrPartition;  // a hole in the reported indexes
  std::int32_t leader_id = -1;
  std::int32_t leader_epoch = -1;
};

struct TopicMetadata {
  ErrorCode error = ErrorCode::kNone;
  Uuid topic_id;                             // zero until a v10+ response names it
  std::vector<PartitionMetadata> partitions;  // index = partition id
};

// What one apply() changed: for the log, and for tests of the rules above.
struct MetadataChanges {
  struct LeaderChange {
    std::string topic;
    std::int32_t partition = 0;
    std::int32_t old_leader = -1;
    std::int32_t new_leader = -1;
    std::int32_t old_epoch = -1;
    std::int32_t new_epoch = -1;
  };
  std::vector<LeaderChange> leader_changes;
  std::vector<std::string> recreated_topics;
  std::vector<std::string> topics;  // every topic the response described
  std::size_t stale_partitions = 0;
  std::size_t out_of_range_partitions = 0;  // indexes no real topic has, ignored
  std::vector<std::int32_t> brokers_added;
  std::vector<std::int32_t> brokers_removed;
  std::vector<std::int32_t> brokers_moved;  // same id, new host:port
};

// Kafka caps nothing, but no real topic comes near this; a larger index in a
// broker's answer would make the partition table ask for gigabytes.
inline constexpr std::int32_t kMaxPartitionIndex = (1 << 20) - 1;

class ClusterMetadata {
 public:
  MetadataChanges apply(const MetadataResponse& response);

  // KIP-951 NodeEndpoints from a ProduceResponse: adds or updates brokers,
  // removes none. Returns the ids whose address changed.
  std::vector<std::int32_t> learn_brokers(std::span<const NodeEndpoint> endpoints);
  // KIP-951 CurrentLeader: taken only with a leader id and epoch >= 0 and an
  // epoch newer than the one known (Metadata.updatePartitionLeadership).
  bool update_partition_leadership(std::string_view topic, std::int32_t partition,
                                   std::int32_t leader_id, std::int32_t leader_epoch);

  const std::map<std::int32_t, BrokerEndpoint>& brokers() const { return brokers_; }
  const BrokerEndpoint* broker(std::int32_t node_id) const;
  const TopicMetadata* topic(std::string_view name) const;
  std::optional<std::string> topic_name(const Uuid& topic_id) const;
  bool has_responses() const { return responses_ > 0; }

 private:
  void apply_brokers(std::span<const MetadataResponseBroker> listed, MetadataChanges& changes);
  void apply_topic(const MetadataResponseTopic& topic, MetadataChanges& changes);

  std::map<std::int32_t, BrokerEndpoint> brokers_;
  std::map<std::string, TopicMetadata, std::less<>> topics_;
  std::uint64_t responses_ = 0;
};

}  // namespace pp::upstream
