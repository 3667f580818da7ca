// Every metric family of docs/design/INTERFACES.md ("Metrics"), registered once on one
// registry. Names carry the produce_proxy_ prefix and Prometheus' unit
// suffixes; label sets are exactly the table's. Which layer feeds which family
// is the business of Metrics and PipelineMetrics, not of this file.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace pp {

// Bucket boundaries of the histograms, chosen for this proxy's ranges.
struct MetricBuckets {
  // Client request: from an acks=0 hand-off (sub-millisecond) to a request
  // that waits out a leader election or the 120 s delivery timeout.
  static const prometheus::Histogram::BucketBoundaries& client_request_seconds();
  // Produce round trip: loopback (sub-ms) up to request_timeout_ms (30 s).
  static const prometheus::Histogram::BucketBoundaries& upstream_request_seconds();
  // Records per upstream batch: 1 (no re-batching happened) to tens of thousands.
  static const prometheus::Histogram::BucketBoundaries& batch_records();
  // Bytes per upstream batch: powers of 4 from 128 B past batch_bytes' 1 MiB default.
  static const prometheus::Histogram::BucketBoundaries& batch_bytes();
  // One spool commit's write and fdatasync: 100 us (a fast NVMe) to seconds
  // (a saturated or failing disk).
  static const prometheus::Histogram::BucketBoundaries& spool_fsync_seconds();
};

struct MetricFamilies {
  // partition_labels=false registers the per-partition families with a topic
  // label only; see PartitionSeries for how partitions then fold together.
  MetricFamilies(prometheus::Registry& registry, bool partition_labels);

  prometheus::Family<prometheus::Gauge>& build_info;
  prometheus::Family<prometheus::Gauge>& client_connections;
  prometheus::Family<prometheus::Counter>& client_requests_total;
  prometheus::Family<prometheus::Histogram>& client_request_duration_seconds;
  prometheus::Family<prometheus::Counter>& records_received_total;
  prometheus::Family<prometheus::Counter>& received_bytes_total;
  prometheus::Family<prometheus::Counter>& records_delivered_total;
  prometheus::Family<prometheus::Counter>& records_failed_total;
  prometheus::Family<prometheus::Gauge>& buffered_bytes;
  prometheus::Family<prometheus::Gauge>& memory_used_bytes;
  prometheus::Family<prometheus::Gauge>& topics_followed;
  prometheus::Family<prometheus::Gauge>& backpressure_active;
  prometheus::Family<prometheus::Counter>& client_share_pauses_total;
  prometheus::Family<prometheus::Counter>& client_tls_handshake_failures_total;
  prometheus::Family<prometheus::Counter>& requests_parked_total;
  prometheus::Family<prometheus::Counter>& requests_refused_for_memory_total;
  prometheus::Family<prometheus::Counter>& client_duplicates_total;
  prometheus::Family<prometheus::Counter>& client_deadline_answers_total;
  prometheus::Family<prometheus::Counter>& client_deadline_records_total;
  prometheus::Family<prometheus::Counter>& client_produce_requests_total;
  prometheus::Family<prometheus::Counter>& principal_requests_total;
  prometheus::Family<prometheus::Counter>& principal_produce_bytes_total;
  prometheus::Family<prometheus::Counter>& principal_throttle_seconds_total;
  prometheus::Family<prometheus::Counter>& principal_authorization_denied_total;
  // inflight_batches is registered before partition_window on purpose: a
  // scrape collects gauge families in registration order, so it reads the
  // in-flight count first and the (only ever growing, between leader changes)
  // window after it, and never sees a fresh count next to a stale window.
  prometheus::Family<prometheus::Gauge>& inflight_batches;
  prometheus::Family<prometheus::Gauge>& partition_window;
  prometheus::Family<prometheus::Counter>& window_resets_total;
  prometheus::Family<prometheus::Gauge>& inflight_requests;
  prometheus::Family<prometheus::Counter>& retries_total;
  prometheus::Family<prometheus::Counter>& duplicate_sequence_total;
  prometheus::Family<prometheus::Counter>& producer_epoch_bumps_total;
  prometheus::Family<prometheus::Counter>& ambiguous_renumbered_total;
  prometheus::Family<prometheus::Counter>& producer_identity_changes_total;
  prometheus::Family<prometheus::Counter>& leader_changes_total;
  prometheus::Family<prometheus::Counter>& upstream_requests_total;
  prometheus::Family<prometheus::Histogram>& upstream_request_duration_seconds;
  prometheus::Family<prometheus::Histogram>& batch_records;
  prometheus::Family<prometheus::Histogram>& batch_bytes;
  prometheus::Family<prometheus::Gauge>& upstream_connected;
  prometheus::Family<prometheus::Counter>& upstream_auth_failures_total;
  prometheus::Family<prometheus::Counter>& upstream_reauthentications_total;
  prometheus::Family<prometheus::Counter>& client_authentications_total;
  prometheus::Family<prometheus::Gauge>& spool_bytes;
  prometheus::Family<prometheus::Gauge>& spool_records;
  prometheus::Family<prometheus::Gauge>& spool_oldest_record_age_seconds;
  prometheus::Family<prometheus::Histogram>& spool_fsync_seconds;
  prometheus::Family<prometheus::Counter>& spool_replayed_batches_total;
  prometheus::Family<prometheus::Counter>& spool_corrupt_bytes_total;
};

}  // namespace pp
