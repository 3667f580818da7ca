// Everything the test cluster knows, with no sockets: brokers, topics,
// partitions (leader, leader epoch, log, producer state, watchdog), producer
// ids, and the fault settings the servers consult. Owned by the loop thread;
// request handlers and tests drive it directly.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/types.h"
#include "tests/broker/cluster_options.h"
#include "tests/broker/inflight_watchdog.h"
#include "tests/broker/partition_log.h"
#include "tests/broker/producer_state.h"

namespace pp::test_broker {

using Status = std::expected<void, std::string>;

struct BrokerInfo {
  BrokerId id = 0;
  std::string host;
  std::uint16_t port = 0;  // fixed once bound, so "up" listens on the same address
  bool up = true;
  bool legacy = false;  // pre-KIP-1269: Produce <= v13, window 5
};

// A partition error to answer instead of processing, `remaining` more times.
struct InjectedError {
  ErrorCode code = ErrorCode::kNone;
  int remaining = 0;
};

struct Partition {
  std::string topic;
  Uuid topic_id;
  std::int32_t index = 0;
  int topic_retain = kDefaultRetain;
  BrokerId leader = -1;  // -1 while no broker is up
  std::int32_t leader_epoch = 0;
  PartitionLog log;
  ProducerStateManager producers;
  InflightWatchdog watchdog;
  std::vector<InjectedError> injected_errors;  // used front first
  // reject-key: a batch holding a record with one of these keys is refused
  // whole with the error, and without record_errors (as brokers before 2.4
  // and policy plugins do); nothing of it is appended.
  std::map<std::string, ErrorCode> rejected_keys;
  std::int64_t rejected_batches = 0;
  std::int64_t duplicates = 0;  // retries recognised and not appended
};

struct Topic {
  std::string name;
  Uuid id;
  int retain = kDefaultRetain;
  std::vector<std::unique_ptr<Partition>> partitions;  // stable addresses
};

// Fault injection the servers apply to Produce requests (docs/design/PIPELINE.md D.5).
struct FaultSettings {
  std::uint32_t rtt_ms = 0;
  double drop_rate = 0.0;
  DropMode drop_mode = DropMode::kSilent;
  struct Disconnects {
    int remaining = 0;
    bool after_append = false;
  };
  std::unordered_map<BrokerId, Disconnects> disconnects;  // next Produce requests to cut
};

class ClusterState {
 public:
  ClusterState(const TestClusterOptions& options, std::uint64_t seed);

  const TestClusterOptions& options() const { return options_; }
  std::uint64_t seed() const { return seed_; }
  std::mt19937_64& rng() { return rng_; }
  FaultSettings& faults() { return faults_; }

  std::vector<BrokerInfo>& brokers() { return brokers_; }
  const std::vector<BrokerInfo>& brokers() const { return brokers_; }
  BrokerInfo* broker(BrokerId id);
  const BrokerInfo* broker(BrokerId id) const;
  // The lowest id among up brokers (Metadata's controller_id), or -1.
  BrokerId controller() const;

  const std::vector<std::unique_ptr<Topic>>& topics() const { return topics_; }
  Topic* topic(std::string_view name);
  Topic* topic(const Uuid& id);
  Partition* partition(std::string_view topic, std::int32_t index);
  Status create_topic(const TopicSpec& spec);
  // DeleteTopics: the topic and its logs are gone; a topic created again under
  // the name gets a new id and empty, never-written logs (KIP-516).
  Status delete_topic(std::string_view name);
  // CreatePartitions: the topic grows to `total` partitions (more than it
  // has, as Kafka's INVALID_PARTITIONS requires); the new ones are empty.
  Status create_partitions(std::string_view name, int total);

  // The producer-state window of `broker` for `p`: the topic's RETAIN on a
  // KIP-1269 broker, 5 on a legacy one, 1 when imitating 0.11.
  int retain_on(BrokerId broker, const Partition& p) const;
  // The window of p's current leader.
  int effective_retain(const Partition& p) const { return retain_on(p.leader, p); }

  // Moves leadership (the leader epoch always increases: KIP-320 bumps it on
  // every election). `truncate_batches` drops that many batches from the end
  // of the log first, as if they had not reached the new leader. Producer
  // state is then rebuilt from the log with the new leader's window, which
  // is what a Kafka follower's state is (docs/design/PIPELINE.md D.4).
  // `to` -1: no leader until moved (Metadata answers LEADER_NOT_AVAILABLE).
  Status move_leader(Partition& p, BrokerId to, std::size_t truncate_batches = 0);
  // Every partition moves to the next up broker after its leader.
  void flip_leaders();
  // Down: the broker's partitions move to the next up broker (a controlled
  // failover), or get no leader if none is up. Up: it leads nothing until moved.
  Status set_broker_up(BrokerId id, bool up);

  // InitProducerId (KIP-98; KIP-360 for a v3+ request naming id and epoch).
  struct ProducerIdGrant {
    ErrorCode error = ErrorCode::kNone;
    std::int64_t producer_id = -1;
    std::int16_t producer_epoch = 0;
  };
  // `version`: a mismatched epoch is PRODUCER_FENCED from v4 (KIP-588),
  // INVALID_PRODUCER_EPOCH before.
  ProducerIdGrant init_producer_id(std::int64_t producer_id, std::int16_t producer_epoch, std::int16_t version);

 private:
  void add_partition(Topic& t);
  void rebuild_producer_state(Partition& p);
  BrokerId next_up_broker_after(BrokerId id) const;

  TestClusterOptions options_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  FaultSettings faults_;
  std::vector<BrokerInfo> brokers_;
  std::vector<std::unique_ptr<Topic>> topics_;
  // Deleted topics stay allocated: a request being answered may still hold
  // their partitions (HeldBatch); nothing finds them any more.
  std::vector<std::unique_ptr<Topic>> deleted_topics_;
  std::size_t partitions_created_ = 0;  // spreads leaders round-robin across topics
  std::int64_t next_producer_id_ = 1000;
  std::unordered_map<std::int64_t, std::int16_t> producer_epochs_;  // the "coordinator"
};

}  // namespace pp::test_broker
