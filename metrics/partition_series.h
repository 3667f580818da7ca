// The per-partition series (inflight_batches, partition_window,
// window_resets_total), or their per-topic fold when partition_labels is off.
//
// Loop thread only. Each partition's children are looked up in prometheus-cpp
// (a map under its mutex) once, when the partition is first seen; after that
// an update is a lookup in our own map plus one atomic store or add.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "proxy/pipeline/topic_partition.h"

namespace pp {

class PartitionSeries {
 public:
  PartitionSeries(prometheus::Family<prometheus::Gauge>& inflight_batches,
                  prometheus::Family<prometheus::Gauge>& partition_window,
                  prometheus::Family<prometheus::Counter>& window_resets_total, bool partition_labels);

  PartitionSeries(const PartitionSeries&) = delete;
  PartitionSeries& operator=(const PartitionSeries&) = delete;

  // The first sight of a partition creates its series at window 5 (the
  // protocol's initial window) with nothing in flight: a RETAIN-5 partition
  // never reports a window change, and must still show its window.
  void set_inflight(const TopicPartition& tp, std::int32_t batches);
  void set_window(const TopicPartition& tp, std::int32_t window);
  void window_reset(const TopicPartition& tp);

  std::size_t partitions_seen() const { return partitions_.size(); }

 private:
  struct Children {
    prometheus::Gauge* inflight = nullptr;
    prometheus::Gauge* window = nullptr;
    prometheus::Counter* resets = nullptr;
  };
  // partition_labels = false: a topic's gauges show the sum of its partitions'
  // in-flight batches and the smallest of their windows (the one that limits
  // throughput, and the one a leader move drops to 5).
  struct Topic {
    Children children;
    std::int64_t inflight_sum = 0;
    std::map<std::int32_t, std::int32_t> partitions_at_window;  // window -> partitions
  };
  struct Partition {
    Children children;       // partition_labels = true
    Topic* topic = nullptr;  // partition_labels = false
    std::int32_t inflight = 0;
    std::int32_t window = 0;
  };

  Partition& partition(const TopicPartition& tp);
  Children make_children(const prometheus::Labels& labels);
  static void move_window(Topic& topic, std::int32_t from, std::int32_t to);

  prometheus::Family<prometheus::Gauge>& inflight_family_;
  prometheus::Family<prometheus::Gauge>& window_family_;
  prometheus::Family<prometheus::Counter>& resets_family_;
  const bool partition_labels_;
  std::unordered_map<TopicPartition, Partition, TopicPartitionHash> partitions_;
  std::unordered_map<std::string, Topic> topics_;  // node-based: Partition::topic stays valid
};

}  // namespace pp
