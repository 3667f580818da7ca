// The KIP-1269 test cluster: N fake Kafka brokers on 127.0.0.1 ephemeral
// ports, served by one libuv loop on a background thread, with Kafka's
// broker-side idempotence (docs/design/PIPELINE.md D), per-topic
// producer.state.batches.to.retain, legacy (pre-KIP-1269) brokers, fault
// injection, and an inspection API for exactly-once assertions.
//
//   TestCluster cluster({.brokers = 3, .topics = {{"t", 6, 20}}});
//   cluster.start();
//   connect_client(cluster.bootstrap());
//   cluster.flip_leaders();
//   EXPECT_EQ(cluster.stats().total_window_violations(), 0);
//   auto records = cluster.records("t", 0);
//
// Every method is thread-safe: it runs on the loop thread and waits for the
// result. Methods that can fail for a caller's mistake (unknown topic, broker
// down) return Status; the message says why.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/types.h"
#include "tests/broker/cluster_options.h"
#include "tests/broker/cluster_stats.h"
#include "tests/broker/partition_log.h"

namespace pp::test_broker {

class ClusterState;
using Status = std::expected<void, std::string>;

struct PartitionInfo {
  Uuid topic_id;
  BrokerId leader = -1;
  std::int32_t leader_epoch = 0;
  int retain = kDefaultRetain;  // the current leader's window
  std::int64_t log_end_offset = 0;
};

class TestCluster {
 public:
  explicit TestCluster(TestClusterOptions options);
  ~TestCluster();  // stops
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // Binds every broker and starts the loop thread. Throws std::runtime_error
  // on bad options or a failed bind (start-up only).
  void start();
  // Closes everything and joins the loop thread. Idempotent. The state stays
  // readable (records(), stats()) after stop.
  void stop();
  bool running() const;

  // "127.0.0.1:P1,127.0.0.1:P2,..." for every broker, up or down.
  std::string bootstrap() const;
  std::uint16_t port(BrokerId broker) const;
  int broker_count() const;
  std::uint64_t seed() const;

  Status create_topic(const TopicSpec& spec);
  // DeleteTopics and CreatePartitions (ClusterState::delete_topic, create_partitions).
  Status delete_topic(std::string_view topic);
  Status create_partitions(std::string_view topic, int total);

  // ---- fault injection (docs/design/PIPELINE.md D.5) ----
  // Leadership moves bump the partition's leader epoch. `truncate_batches`
  // drops that many batches from the log's end first (an unreplicated tail)
  // and producer state is rebuilt from what is left.
  Status move_leader(std::string_view topic, std::int32_t partition, BrokerId to, std::size_t truncate_batches = 0);
  void flip_leaders();
  // Down: listener and connections closed, its partitions move to the next
  // broker up. Up: listens again on the same port (leads nothing until moved).
  Status broker_down(BrokerId broker);
  Status broker_up(BrokerId broker);
  // Every response leaves this long after its request arrived.
  void set_rtt_ms(std::uint32_t rtt_ms);
  // Each Produce response is, with probability `rate`, dropped after the
  // append: silently (and every later response on that connection with it,
  // DropMode::kSilent), or by closing the connection in its place.
  Status drop_responses(double rate, DropMode mode = DropMode::kSilent);
  // The next `count` produces to the partition's leader get `error`. Errors
  // Kafka returns after appending (NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  // REQUEST_TIMED_OUT) append first; every other error appends nothing.
  Status inject_error(std::string_view topic, std::int32_t partition, ErrorCode error, int count);
  // From now on every produce batch for the partition holding a record with
  // key `key` is refused whole with `error`, without record_errors, and
  // appends nothing (error NONE lifts it). rejected_batches counts them.
  Status reject_key(std::string_view topic, std::int32_t partition, std::string key, ErrorCode error);
  std::int64_t rejected_batches(std::string_view topic, std::int32_t partition) const;
  // The next `count` Produce requests to `broker` close their connection
  // mid-request, before or after the append.
  Status disconnect_next_produce(BrokerId broker, int count, bool after_append);
  // Closes every client connection of `broker` now.
  Status close_connections(BrokerId broker);

  // ---- inspection ----
  ClusterStats stats() const;
  // Every record appended to the partition, in log order.
  std::vector<AppendedRecord> records(std::string_view topic, std::int32_t partition) const;
  std::vector<AppendedBatch> batches(std::string_view topic, std::int32_t partition) const;
  std::optional<PartitionInfo> partition_info(std::string_view topic, std::int32_t partition) const;
  std::size_t connection_count(BrokerId broker) const;

  // One control command line (docs/design/INTERFACES.md): "ok", "error: ...", or for
  // `stats` the JSON line. Implemented in control_commands.cc.
  std::string execute(std::string_view command_line);

  // Runs `fn` on the loop thread with the raw state, for what the API above
  // doesn't cover.
  void with_state(const std::function<void(ClusterState&)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::test_broker
