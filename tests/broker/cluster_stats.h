// The per-partition counters of the `stats` control command (docs/design/INTERFACES.md,
// Test cluster), as a struct for C++ tests and as its one-line JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/broker/cluster_options.h"

namespace pp::test_broker {

class ClusterState;

struct PartitionStats {
  std::string topic;
  std::int32_t partition = 0;
  BrokerId leader = -1;
  std::int32_t leader_epoch = 0;
  int retain = kDefaultRetain;  // the current leader's window
  std::int64_t records = 0;
  std::int64_t duplicates = 0;  // retried batches recognised and not appended
  int max_inflight = 0;         // most batches of one producer held at once
  std::int64_t window_violations = 0;
  // Not in the JSON line: extra detail for C++ tests.
  std::int64_t batches = 0;
  std::int64_t log_end_offset = 0;
};

struct ClusterStats {
  std::vector<PartitionStats> partitions;

  const PartitionStats* find(std::string_view topic, std::int32_t partition) const;
  std::int64_t total_records() const;
  std::int64_t total_duplicates() const;
  std::int64_t total_window_violations() const;
  int max_inflight() const;
};

ClusterStats collect_stats(const ClusterState& cluster);

// {"partitions":[{"topic":"t","partition":0,"leader":1,"leader_epoch":3,"retain":20,
//   "records":1234,"duplicates":2,"max_inflight":20,"window_violations":0}]}
std::string to_json(const ClusterStats& stats);

}  // namespace pp::test_broker
