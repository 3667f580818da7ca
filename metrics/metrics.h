// All of produce-proxy's metrics (docs/design/INTERFACES.md "Metrics") on one registry.
//
//   Metrics metrics(MetricsConfig{.address = ..., .partition_labels = ...});
//   IdempotentProducer producer(..., &metrics.pipeline_observer());
//   FrontendContext ctx(..., metrics.frontend_observer());
//   metrics.sample(producer.buffered_bytes(), brokers);    // a loop timer
//   MetricsServer server(config.address, metrics, health); // HTTP
//
// Threads: every update method runs on the loop thread ("One loop thread owns
// all proxy state", docs/design/ARCHITECTURE.md, rules of the house); the label
// caches behind them are unsynchronised on purpose. The values are
// prometheus-cpp atomics, read by the HTTP server's threads through registry()
// without any lock of ours.
#pragma once

#include <prometheus/registry.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "metrics/child_cache.h"
#include "metrics/frontend_metrics.h"
#include "metrics/metric_families.h"
#include "metrics/metrics_config.h"
#include "metrics/pipeline_metrics.h"
#include "metrics/principal_metrics.h"
#include "metrics/spool_metrics.h"
#include "metrics/upstream_metrics.h"
#include "proxy/protocol/api_key.h"

namespace pp {

// One broker connection as Upstream::broker_status() reports it, in plain
// values so metrics/ does not depend on the upstream layer.
struct BrokerSample {
  std::int32_t node_id = -1;
  int in_flight = 0;       // Produce requests awaiting a response
  bool connected = false;  // connected and versions negotiated
};

// The version build_info reports when the caller names none.
std::string_view build_version();

class Metrics {
 public:
  explicit Metrics(const MetricsConfig& config, std::string_view version = build_version());

  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // For the exposer and tests; outlives nothing: hold it only while Metrics lives.
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }
  // Hand this to IdempotentProducer. Same lifetime as *this.
  PipelineObserver& pipeline_observer() { return pipeline_; }
  // Hand this to the front end (FrontendContext); it forwards to the methods below.
  FrontendObserver& frontend_observer() { return frontend_; }
  // Hand this to the Upstream (UpstreamConfig::observer). Same lifetime as *this.
  upstream::UpstreamObserver& upstream_observer() { return upstream_; }
  // Hand this to the spool's writer and recovery; sample() refreshes the
  // oldest record's age. Same lifetime as *this.
  SpoolMetrics& spool_observer() { return spool_; }

  // --- front end (loop thread), per request or per event; FrontendMetrics
  // calls these, and so may a test or another ingress ---
  void set_client_connections(std::int64_t open);
  // Requests by API and version. Only pairs the proxy describes (api_registry)
  // get their own version label; anything else a peer sends is counted under
  // version="unsupported" (and api="unknown" for keys we don't know), so a
  // peer cannot grow the number of series.
  void on_client_request(ApiKey api, std::int16_t version);
  // acks: 0, 1 or -1 (labelled "all"); any other value is labelled "invalid".
  void on_client_request_done(std::int16_t acks, std::chrono::nanoseconds duration);
  // Per request (or per record run), never per record.
  void on_records_received(std::int64_t records, std::int64_t bytes);
  void set_backpressure(bool active);
  void on_client_share_pause();
  // reason: a fixed label (ClientHandshakes): a handful of series at most.
  void on_client_tls_failure(std::string_view reason);
  void on_request_parked();
  void on_request_refused_for_memory();
  // outcome: "acked" or "in_flight" (anything else is counted as "in_flight").
  void on_client_duplicate(std::string_view outcome);
  // A partition of a Produce request answered at the request's deadline:
  // withdrawn unsent, or else in flight; with its records.
  void on_deadline_answer(bool withdrawn, std::int64_t records);
  // At most kMaxClientSoftwareSeries (software, software_version) pairs get
  // their own series; later ones are counted as software="other", so a peer
  // cannot grow the number of series.
  void on_client_produce(std::string_view software, std::string_view software_version, std::int16_t version,
                         std::int8_t magic);
  static constexpr std::size_t kMaxClientSoftwareSeries = 100;
  // The per-principal series, capped (PrincipalMetrics).
  PrincipalMetrics& principals() { return principals_; }

  // --- upstream authentication (loop thread), per event ---
  // reason: a fixed label from the upstream layer ("sasl_authentication", ...).
  void on_upstream_reauthentication(std::int32_t node);

  // --- client authentication (loop thread), per login ---
  // mechanism and result: fixed labels from the front end (FrontendObserver::
  // on_authentication), a handful of values each.
  void on_client_authentication(std::string_view mechanism, std::string_view result);

  // --- a periodic sampler on the loop (every few hundred ms) ---
  // buffered_bytes from IdempotentProducer::buffered_bytes(); brokers from
  // Upstream::broker_status(). A broker that was sampled before and is
  // missing now reads as disconnected with nothing in flight.
  void sample(std::size_t buffered_bytes, std::span<const BrokerSample> brokers);
  // The budget's use by holder (memory_used_bytes{use}).
  void sample_memory(std::span<const std::pair<std::string_view, std::size_t>> by_use);
  void sample_topics(std::size_t followed) { topics_followed_.Set(static_cast<double>(followed)); }

  // The Prometheus text format of everything, as /metrics serves it (minus
  // the exposer's own scrape counters). Any thread.
  std::string exposition() const;

 private:
  prometheus::Histogram& acks_histogram(std::int16_t acks);

  std::shared_ptr<prometheus::Registry> registry_;
  MetricFamilies families_;
  PipelineMetrics pipeline_;
  FrontendMetrics frontend_{*this};
  PrincipalMetrics principals_{families_};
  UpstreamMetrics upstream_{families_.upstream_auth_failures_total};
  SpoolMetrics spool_{families_};
  prometheus::Gauge& client_connections_;
  prometheus::Counter& records_received_;
  prometheus::Counter& received_bytes_;
  prometheus::Gauge& buffered_bytes_;
  prometheus::Gauge& topics_followed_;
  prometheus::Gauge& backpressure_;
  prometheus::Counter& share_pauses_;
  prometheus::Counter& requests_parked_;
  prometheus::Counter& requests_refused_for_memory_;
  prometheus::Counter& duplicates_acked_;
  prometheus::Counter& duplicates_in_flight_;
  prometheus::Counter& deadline_withdrawn_;
  prometheus::Counter& deadline_in_flight_;
  prometheus::Counter& deadline_withdrawn_records_;
  prometheus::Counter& deadline_in_flight_records_;
  std::set<std::pair<std::string, std::string>> client_software_;  // named so far
  std::map<std::tuple<std::string, std::string, std::int16_t, std::int8_t>, prometheus::Counter*> client_produce_;
  ChildCache<prometheus::Counter, std::int32_t> requests_;  // key: api << 16 | version
  std::array<prometheus::Histogram*, 4> by_acks_{};         // 0, 1, all, invalid (lazy)
  ChildCache<prometheus::Gauge, std::int32_t> broker_inflight_;
  ChildCache<prometheus::Gauge, std::int32_t> broker_connected_;
  ChildCache<prometheus::Counter, std::int32_t> reauthentications_;
};

}  // namespace pp
