// The pipeline's facts as metrics: pp::PipelineObserver, implemented over the
// families of MetricFamilies. The idempotent producer calls it on the loop
// thread, per batch or per event, never per record; every call here is a
// lookup of a cached child plus one atomic update (a histogram observation
// also takes prometheus-cpp's per-histogram mutex, uncontended but for scrapes).
#pragma once

#include <prometheus/counter.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "metrics/child_cache.h"
#include "metrics/metric_families.h"
#include "metrics/partition_series.h"
#include "proxy/pipeline/pipeline_observer.h"

namespace pp {

class PipelineMetrics final : public PipelineObserver {
 public:
  PipelineMetrics(MetricFamilies& families, bool partition_labels);

  void on_window(const TopicPartition& tp, std::int32_t window) override;
  void on_window_reset(const TopicPartition& tp) override;
  void on_inflight_batches(const TopicPartition& tp, std::int32_t count) override;
  void on_batch_sent(const TopicPartition& tp, std::int32_t records, std::size_t bytes, bool retry) override;
  void on_retry(ErrorCode error) override;
  void on_duplicate_sequence() override;
  void on_epoch_bump(std::string_view reason) override;
  void on_ambiguous_renumbered(std::string_view reason, std::int64_t batches) override;
  void on_identity_state(std::string_view state) override;
  void on_leader_change(const TopicPartition& tp) override;
  void on_records_delivered(std::int64_t records) override;
  void on_records_failed(ErrorCode error, std::int64_t records) override;
  void on_produce_request(std::int32_t node) override;
  void on_produce_response(std::int32_t node, std::int64_t round_trip_ms) override;

 private:
  PartitionSeries partitions_;
  ChildCache<prometheus::Counter, ErrorCode> retries_;
  ChildCache<prometheus::Counter, ErrorCode> failed_;
  ChildCache<prometheus::Counter, std::int32_t> requests_by_node_;
  // Reasons are the pipeline's string literals: a handful of keys, ever.
  ChildCache<prometheus::Counter, std::string> bumps_by_reason_;
  ChildCache<prometheus::Counter, std::string> identity_changes_;
  ChildCache<prometheus::Counter, std::string> ambiguous_renumbered_;
  prometheus::Counter& duplicates_;
  prometheus::Counter& leader_changes_;
  prometheus::Counter& delivered_;
  prometheus::Histogram& round_trip_;
  prometheus::Histogram& batch_records_;
  prometheus::Histogram& batch_bytes_;
};

}  // namespace pp
