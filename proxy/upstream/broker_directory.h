// The brokers of the cluster as the last Metadata answer listed them (node id
// -> endpoint), plus those KIP-951 NodeEndpoints named since: where the
// connection pool can connect. Topics and leadership are the pipeline's
// (proxy/pipeline/topic_table.h); read_topics() only shapes an answer's
// topics for it, dropping partition indexes no real topic has.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "proxy/pipeline/upstream_port.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"

namespace pp::upstream {

struct BrokerEndpoint {
  std::int32_t node_id = -1;
  std::string host;
  std::int32_t port = 0;
  std::optional<std::string> rack;

  bool same_address(const BrokerEndpoint& o) const { return host == o.host && port == o.port; }
  std::string to_string() const;
};

struct BrokerChanges {
  std::vector<std::int32_t> added;
  std::vector<std::int32_t> removed;
  std::vector<std::int32_t> moved;  // same id, new host:port
};

// Kafka caps nothing, but no real topic comes near this; a larger index in a
// broker's answer would make the partition table ask for gigabytes.
inline constexpr std::int32_t kMaxPartitionIndex = (1 << 20) - 1;

struct TopicsRead {
  MetadataUpdate update;                    // each topic's partitions dense by index
  std::size_t out_of_range_partitions = 0;  // ignored
  std::size_t unasked_topics = 0;           // ignored
};
// The named topics of an answer (we ask by name, so answers carry names).
// A topic-level error (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE while
// it is being created, ...) comes with no usable partitions; holes in the
// reported indexes read as UNKNOWN_TOPIC_OR_PARTITION. With `asked`, a topic
// not in it is skipped: a broker naming topics nobody asked about would
// otherwise get them past upstream.max_topics and the idle sweep.
TopicsRead read_topics(const MetadataResponse& response, const std::set<std::string>* asked = nullptr);

class BrokerDirectory {
 public:
  // A Metadata answer lists every live broker: the set is replaced. An
  // answer with a top-level error (Metadata v13, KIP-1102) describes nothing
  // and must not be applied.
  BrokerChanges apply(std::span<const MetadataResponseBroker> listed);
  // KIP-951 NodeEndpoints from a ProduceResponse: adds or updates brokers,
  // removes none. Returns the ids whose address changed.
  std::vector<std::int32_t> learn(std::span<const NodeEndpoint> endpoints);

  const std::map<std::int32_t, BrokerEndpoint>& all() const { return brokers_; }
  const BrokerEndpoint* find(std::int32_t node_id) const;

 private:
  std::map<std::int32_t, BrokerEndpoint> brokers_;
};

}  // namespace pp::upstream
