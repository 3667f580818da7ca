#include "metrics/pipeline_metrics.h"

#include <string>

namespace pp {

namespace {

prometheus::Labels error_label(ErrorCode e) {
  return {{"error", std::string(error_name(e))}};
}

prometheus::Labels broker_label(std::int32_t node) {
  return {{"broker", std::to_string(node)}};
}

prometheus::Labels reason_label(const std::string& reason) {
  return {{"reason", reason}};
}
prometheus::Labels state_label(const std::string& state) {
  return {{"state", state}};
}

}  // namespace

PipelineMetrics::PipelineMetrics(MetricFamilies& families, bool partition_labels)
    : partitions_(families.inflight_batches, families.partition_window, families.window_resets_total, partition_labels),
      retries_(families.retries_total),
      failed_(families.records_failed_total),
      requests_by_node_(families.upstream_requests_total),
      bumps_by_reason_(families.producer_epoch_bumps_total),
      identity_changes_(families.producer_identity_changes_total),
      ambiguous_renumbered_(families.ambiguous_renumbered_total),
      // Unlabelled series exist from the start, so a scrape shows 0, not nothing.
      duplicates_(families.duplicate_sequence_total.Add({})),
      leader_changes_(families.leader_changes_total.Add({})),
      delivered_(families.records_delivered_total.Add({})),
      round_trip_(families.upstream_request_duration_seconds.Add({}, MetricBuckets::upstream_request_seconds())),
      batch_records_(families.batch_records.Add({}, MetricBuckets::batch_records())),
      batch_bytes_(families.batch_bytes.Add({}, MetricBuckets::batch_bytes())) {
  // Every state shows from the start: an alert on FATAL needs a 0 before the 1.
  for (std::string_view state : {"UNINITIALIZED", "INITIALIZING", "READY", "FATAL"}) {
    identity_changes_.get(std::string(state), state_label);
  }
  // Every reason shows 0 from the start, so an alert can fire on the first one.
  for (std::string_view reason : {"epoch_bump", "record_errors", "bisection", "spool_replay"}) {
    ambiguous_renumbered_.get(std::string(reason), reason_label);
  }
}

void PipelineMetrics::on_window(const TopicPartition& tp, std::int32_t window) {
  partitions_.set_window(tp, window);
}

void PipelineMetrics::on_window_reset(const TopicPartition& tp) {
  partitions_.window_reset(tp);
}

void PipelineMetrics::on_inflight_batches(const TopicPartition& tp, std::int32_t count) {
  partitions_.set_inflight(tp, count);
}

void PipelineMetrics::on_batch_sent(const TopicPartition&, std::int32_t records, std::size_t bytes, bool retry) {
  // A retry re-sends a batch already measured; counting it again would skew
  // the size distribution towards whatever failed. retries_total counts those.
  if (retry) return;
  batch_records_.Observe(records);
  batch_bytes_.Observe(static_cast<double>(bytes));
}

void PipelineMetrics::on_retry(ErrorCode error) {
  retries_.get(error, error_label).Increment();
}

void PipelineMetrics::on_duplicate_sequence() {
  duplicates_.Increment();
}

void PipelineMetrics::on_epoch_bump(std::string_view reason) {
  bumps_by_reason_.get(std::string(reason), reason_label).Increment();
}

void PipelineMetrics::on_ambiguous_renumbered(std::string_view reason, std::int64_t batches) {
  ambiguous_renumbered_.get(std::string(reason), reason_label).Increment(static_cast<double>(batches));
}

void PipelineMetrics::on_identity_state(std::string_view state) {
  identity_changes_.get(std::string(state), state_label).Increment();
}

void PipelineMetrics::on_leader_change(const TopicPartition&) {
  leader_changes_.Increment();
}

void PipelineMetrics::on_records_delivered(std::int64_t records) {
  delivered_.Increment(static_cast<double>(records));
}

void PipelineMetrics::on_records_failed(ErrorCode error, std::int64_t records) {
  failed_.get(error, error_label).Increment(static_cast<double>(records));
}

void PipelineMetrics::on_produce_request(std::int32_t node) {
  requests_by_node_.get(node, broker_label).Increment();
}

void PipelineMetrics::on_produce_response(std::int32_t, std::int64_t round_trip_ms) {
  round_trip_.Observe(static_cast<double>(round_trip_ms) / 1000.0);
}

}  // namespace pp
