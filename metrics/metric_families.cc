#include "metrics/metric_families.h"

#include <string>

namespace pp {

namespace {

constexpr const char* kPrefix = "produce_proxy_";

std::string name(const char* suffix) {
  return std::string(kPrefix) + suffix;
}

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const char* n, const char* help) {
  return prometheus::BuildGauge().Name(name(n)).Help(help).Register(r);
}

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const char* n, const char* help) {
  return prometheus::BuildCounter().Name(name(n)).Help(help).Register(r);
}

prometheus::Family<prometheus::Histogram>& histogram(prometheus::Registry& r, const char* n, const char* help) {
  return prometheus::BuildHistogram().Name(name(n)).Help(help).Register(r);
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& MetricBuckets::client_request_seconds() {
  static const prometheus::Histogram::BucketBoundaries b{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                         0.5,    1,     2.5,    5,     10,   30,    60,   120};
  return b;
}

const prometheus::Histogram::BucketBoundaries& MetricBuckets::spool_fsync_seconds() {
  static const prometheus::Histogram::BucketBoundaries b{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                         0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
  return b;
}

const prometheus::Histogram::BucketBoundaries& MetricBuckets::upstream_request_seconds() {
  static const prometheus::Histogram::BucketBoundaries b{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                         0.25,  0.5,    1,     2.5,  5,     10,   30};
  return b;
}

const prometheus::Histogram::BucketBoundaries& MetricBuckets::batch_records() {
  static const prometheus::Histogram::BucketBoundaries b{1,   2,   5,    10,   20,   50,    100,
                                                         200, 500, 1000, 2000, 5000, 10000, 50000};
  return b;
}

const prometheus::Histogram::BucketBoundaries& MetricBuckets::batch_bytes() {
  static const prometheus::Histogram::BucketBoundaries b{128,    512,     2048,    8192,    32768,   131072,
                                                         524288, 1048576, 2097152, 4194304, 16777216};
  return b;
}

MetricFamilies::MetricFamilies(prometheus::Registry& r, bool partition_labels)
    : build_info(gauge(r, "build_info", "Always 1; the version label says which build runs.")),
      client_connections(gauge(r, "client_connections", "Open client connections.")),
      client_requests_total(counter(r, "client_requests_total", "Requests from clients by Kafka API and version.")),
      client_request_duration_seconds(
          histogram(r, "client_request_duration_seconds",
                    "Produce request from receipt to response written (acks 1/all) or to records "
                    "handed to the pipeline (acks 0), by acks.")),
      records_received_total(counter(r, "records_received_total", "Records accepted from clients.")),
      received_bytes_total(counter(r, "received_bytes_total", "Record bytes accepted from clients.")),
      records_delivered_total(
          counter(r, "records_delivered_total", "Records acknowledged by the upstream cluster (acks=all).")),
      records_failed_total(
          counter(r, "records_failed_total", "Records given up (delivery timeout, fatal error), by Kafka error name.")),
      buffered_bytes(gauge(r, "buffered_bytes",
                           "Bytes charged to the memory budget (producer.buffer_memory_bytes): everything held "
                           "between clients and the upstream cluster.")),
      memory_used_bytes(gauge(r, "memory_used_bytes",
                              "The memory budget's use by what holds it: request_frames, decoded_records, "
                              "upstream_batches, responses, client_producers.")),
      topics_followed(gauge(r, "topics_followed",
                            "Topics the proxy follows upstream (at most upstream.max_topics; one unused for "
                            "upstream.metadata_max_idle_ms is forgotten).")),
      backpressure_active(gauge(r, "backpressure_active", "1 while client reads are paused for memory.")),
      client_share_pauses_total(counter(r, "client_share_pauses_total",
                                        "Times a client connection stopped reading because it held its fair share "
                                        "of the memory budget (the budget over the connections holding or "
                                        "wanting memory).")),
      client_tls_handshake_failures_total(
          counter(r, "client_tls_handshake_failures_total",
                  "Client connections closed for TLS ([listener.tls]), by reason: certificate (untrusted, "
                  "expired, no subject CN), no_certificate (required, none sent), not_tls (plaintext on the TLS "
                  "listener), handshake (protocol error, alert, closed mid-handshake), timeout, local, "
                  "plaintext_listener (a TLS handshake on the plaintext listener).")),
      requests_parked_total(counter(r, "requests_parked_total",
                                    "Produce requests that waited for room in the memory budget to decode in, "
                                    "instead of taking memory over it.")),
      requests_refused_for_memory_total(
          counter(r, "requests_refused_for_memory_total",
                  "Produce requests with a partition answered NOT_ENOUGH_REPLICAS (retriable, not appended): it "
                  "would decode past the memory budget's room plus the fixed overdraft while nothing drained.")),
      client_duplicates_total(
          counter(r, "client_duplicates_total",
                  "Idempotent clients' retries recognised by the front end and not sent upstream again, by "
                  "outcome: acked (answered with the original offsets) or in_flight (answered when the "
                  "original completes).")),
      client_deadline_answers_total(
          counter(r, "client_deadline_answers_total",
                  "Partitions of Produce requests answered at the request's deadline (its timeout_ms less a margin), "
                  "by outcome: withdrawn (none of its records had been sent upstream: NOT_ENOUGH_REPLICAS, retried "
                  "without duplicates) or in_flight (records in flight upstream: REQUEST_TIMED_OUT; a "
                  "non-idempotent client's retry of them may be written twice, as against Kafka).")),
      client_deadline_records_total(counter(r, "client_deadline_records_total",
                                            "The records of the partitions in client_deadline_answers_total, by the "
                                            "same outcome.")),
      client_produce_requests_total(
          counter(r, "client_produce_requests_total",
                  "Produce requests by client software (ApiVersions v3+ client_software_name and _version, "
                  "else client_id), Produce version and message format (magic of the first record set; "
                  "none when empty).")),
      principal_requests_total(counter(r, "principal_requests_total",
                                       "Requests from clients by principal ([[listener.principals]]; ANONYMOUS "
                                       "when unauthenticated; the first 100 names, the rest as other).")),
      principal_produce_bytes_total(counter(r, "principal_produce_bytes_total",
                                            "Produce request bytes by principal, as counted against its "
                                            "produce_bytes_per_second quota.")),
      principal_throttle_seconds_total(counter(r, "principal_throttle_seconds_total",
                                               "Time a principal's connections were muted for its produce quota "
                                               "(KIP-219 throttle_time_ms), by principal.")),
      principal_authorization_denied_total(
          counter(r, "principal_authorization_denied_total",
                  "Topic partitions, topics or requests refused by [[listener.principals]], by principal and "
                  "operation: write (Produce), describe (Metadata) or idempotent_write (InitProducerId).")),
      inflight_batches(gauge(r, "inflight_batches",
                             partition_labels ? "Batches in flight per partition."
                                              : "Batches in flight, summed over each topic's partitions.")),
      partition_window(gauge(r, "partition_window",
                             partition_labels ? "Current dedup window per partition (KIP-1269; 5 until learned)."
                                              : "Smallest current dedup window among each topic's partitions "
                                                "(KIP-1269; 5 until learned).")),
      window_resets_total(counter(r, "window_resets_total", "Dedup window resets to 5 on a leader change.")),
      inflight_requests(gauge(r, "inflight_requests", "Produce requests in flight per broker connection.")),
      retries_total(counter(r, "retries_total", "Batches sent again, by the Kafka error that caused it.")),
      duplicate_sequence_total(counter(r, "duplicate_sequence_total",
                                       "Batches the broker reported as duplicates (DUPLICATE_SEQUENCE_NUMBER).")),
      producer_epoch_bumps_total(
          counter(r, "producer_epoch_bumps_total", "Producer epoch bumps and new producer ids, by reason.")),
      ambiguous_renumbered_total(counter(r, "ambiguous_renumbered_total",
                                         "Batches that may already have been in the log when they were renumbered "
                                         "(epoch_bump, record_errors): their records may be in the log twice.")),
      producer_identity_changes_total(
          counter(r, "producer_identity_changes_total",
                  "Producer identity state changes (InitProducerId, epoch exhaustion, fatal errors), by the state "
                  "entered.")),
      leader_changes_total(counter(r, "leader_changes_total", "Partition leader changes seen.")),
      upstream_requests_total(counter(r, "upstream_requests_total", "Produce requests sent, by broker node id.")),
      upstream_request_duration_seconds(
          histogram(r, "upstream_request_duration_seconds", "Produce round trip to the upstream cluster.")),
      batch_records(histogram(r, "batch_records", "Records per upstream batch (first send only).")),
      batch_bytes(histogram(r, "batch_bytes", "Bytes per upstream batch (first send only).")),
      upstream_connected(
          gauge(r, "upstream_connected", "1 while the broker connection is up and negotiated, by broker node id.")),
      upstream_auth_failures_total(counter(r, "upstream_auth_failures_total",
                                           "Broker connections that failed to authenticate (TLS handshake or "
                                           "SASL), by broker host:port and reason.")),
      upstream_reauthentications_total(
          counter(r, "upstream_reauthentications_total", "Completed KIP-368 re-authentications, by broker node id.")),
      client_authentications_total(counter(r, "client_authentications_total",
                                           "Client SASL authentications on the listener ([listener.sasl]), by "
                                           "mechanism (none: the handshake named no enabled one) and result: "
                                           "success, or the failure's reason (unknown_user, bad_password, "
                                           "malformed, unsupported_mechanism, protocol, abandoned).")),
      spool_bytes(gauge(r, "spool_bytes", "Bytes of the spool's segment files (spool.max_bytes bounds them).")),
      spool_records(gauge(r, "spool_records", "Client records in the spool not yet acknowledged upstream or failed.")),
      spool_oldest_record_age_seconds(gauge(r, "spool_oldest_record_age_seconds",
                                            "Age of the oldest record in the spool not yet resolved; 0 when none.")),
      spool_fsync_seconds(histogram(r, "spool_fsync_seconds",
                                    "One spool group commit: the write and fdatasync that make its appends durable.")),
      spool_replayed_batches_total(
          counter(r, "spool_replayed_batches_total",
                  "Batches re-sent after a restart with the producer id, epoch and sequence they first went with.")),
      spool_corrupt_bytes_total(counter(r, "spool_corrupt_bytes_total",
                                        "Spool bytes found torn (cut off the last segment) or corrupt (a segment "
                                        "moved aside) by recovery.")) {}

}  // namespace pp
