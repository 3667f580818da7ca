#include "metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>

#include "proxy/protocol/api_registry.h"

#ifndef PP_METRICS_VERSION
#define PP_METRICS_VERSION "unknown"
#endif

namespace pp {

namespace {

constexpr std::int16_t kUnsupportedVersion = -1;

std::int32_t request_key(std::int16_t api, std::int16_t version) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint16_t>(api)) << 16 |
                                   static_cast<std::uint16_t>(version));
}

prometheus::Labels request_labels(std::int32_t key) {
  const auto api = static_cast<ApiKey>(static_cast<std::int16_t>(key >> 16));
  const auto version = static_cast<std::int16_t>(key & 0xffff);
  std::string name(api_name(api));
  if (name == "Unknown") name = "unknown";
  return {{"api", name}, {"version", version == kUnsupportedVersion ? "unsupported" : std::to_string(version)}};
}

prometheus::Labels broker_label(std::int32_t node) {
  return {{"broker", std::to_string(node)}};
}

}  // namespace

std::string_view build_version() {
  return PP_METRICS_VERSION;
}

Metrics::Metrics(const MetricsConfig& config, std::string_view version)
    : registry_(std::make_shared<prometheus::Registry>()),
      families_(*registry_, config.partition_labels),
      pipeline_(families_, config.partition_labels),
      client_connections_(families_.client_connections.Add({})),
      records_received_(families_.records_received_total.Add({})),
      received_bytes_(families_.received_bytes_total.Add({})),
      buffered_bytes_(families_.buffered_bytes.Add({})),
      topics_followed_(families_.topics_followed.Add({})),
      backpressure_(families_.backpressure_active.Add({})),
      share_pauses_(families_.client_share_pauses_total.Add({})),
      requests_parked_(families_.requests_parked_total.Add({})),
      requests_refused_for_memory_(families_.requests_refused_for_memory_total.Add({})),
      duplicates_acked_(families_.client_duplicates_total.Add({{"outcome", "acked"}})),
      duplicates_in_flight_(families_.client_duplicates_total.Add({{"outcome", "in_flight"}})),
      deadline_withdrawn_(families_.client_deadline_answers_total.Add({{"outcome", "withdrawn"}})),
      deadline_in_flight_(families_.client_deadline_answers_total.Add({{"outcome", "in_flight"}})),
      deadline_withdrawn_records_(families_.client_deadline_records_total.Add({{"outcome", "withdrawn"}})),
      deadline_in_flight_records_(families_.client_deadline_records_total.Add({{"outcome", "in_flight"}})),
      requests_(families_.client_requests_total),
      broker_inflight_(families_.inflight_requests),
      broker_connected_(families_.upstream_connected),
      reauthentications_(families_.upstream_reauthentications_total) {
  families_.build_info.Add({{"version", std::string(version)}}).Set(1);
  // The three valid acks exist from the start, so a dashboard's rate() has a
  // zero to start from; "invalid" appears only if a client sends one.
  for (std::int16_t acks : {0, 1, -1}) acks_histogram(acks);
}

prometheus::Histogram& Metrics::acks_histogram(std::int16_t acks) {
  const std::size_t slot = acks == 0 ? 0 : acks == 1 ? 1 : acks == -1 ? 2 : 3;
  if (!by_acks_[slot]) {
    static constexpr const char* kNames[] = {"0", "1", "all", "invalid"};
    by_acks_[slot] = &families_.client_request_duration_seconds.Add({{"acks", kNames[slot]}},
                                                                    MetricBuckets::client_request_seconds());
  }
  return *by_acks_[slot];
}

void Metrics::set_client_connections(std::int64_t open) {
  client_connections_.Set(static_cast<double>(open));
}

void Metrics::on_client_request(ApiKey api, std::int16_t version) {
  const ApiSpec* spec = find_api(api);
  if (!spec || !spec->versions.contains(version)) version = kUnsupportedVersion;
  requests_.get(request_key(static_cast<std::int16_t>(api), version), request_labels).Increment();
}

void Metrics::on_client_request_done(std::int16_t acks, std::chrono::nanoseconds duration) {
  acks_histogram(acks).Observe(std::chrono::duration<double>(duration).count());
}

void Metrics::on_records_received(std::int64_t records, std::int64_t bytes) {
  records_received_.Increment(static_cast<double>(records));
  received_bytes_.Increment(static_cast<double>(bytes));
}

void Metrics::set_backpressure(bool active) {
  backpressure_.Set(active ? 1 : 0);
}

void Metrics::on_client_share_pause() {
  share_pauses_.Increment();
}

void Metrics::on_client_tls_failure(std::string_view reason) {
  families_.client_tls_handshake_failures_total.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::on_request_parked() {
  requests_parked_.Increment();
}

void Metrics::on_request_refused_for_memory() {
  requests_refused_for_memory_.Increment();
}

void Metrics::on_client_duplicate(std::string_view outcome) {
  (outcome == "acked" ? duplicates_acked_ : duplicates_in_flight_).Increment();
}

void Metrics::on_deadline_answer(bool withdrawn, std::int64_t records) {
  (withdrawn ? deadline_withdrawn_ : deadline_in_flight_).Increment();
  (withdrawn ? deadline_withdrawn_records_ : deadline_in_flight_records_).Increment(static_cast<double>(records));
}

void Metrics::on_client_produce(std::string_view software, std::string_view software_version, std::int16_t version,
                                std::int8_t magic) {
  std::pair<std::string, std::string> who{std::string(software), std::string(software_version)};
  if (!client_software_.contains(who)) {
    if (client_software_.size() >= kMaxClientSoftwareSeries) {
      who = {"other", ""};
    } else {
      client_software_.insert(who);
    }
  }
  // Versions and magics a peer can send are bounded by what decodes (Produce
  // v0-v12); an unknown magic byte is one more value of an int8.
  auto key = std::tuple{who.first, who.second, version, magic};
  auto it = client_produce_.find(key);
  if (it == client_produce_.end()) {
    auto& c = families_.client_produce_requests_total.Add(
        {{"software", who.first},
         {"software_version", who.second},
         {"version", std::to_string(version)},
         {"magic", magic < 0 ? std::string("none") : std::to_string(magic)}});
    it = client_produce_.emplace(std::move(key), &c).first;
  }
  it->second->Increment();
}

void Metrics::sample_memory(std::span<const std::pair<std::string_view, std::size_t>> by_use) {
  for (const auto& [use, bytes] : by_use) {
    families_.memory_used_bytes.Add({{"use", std::string(use)}}).Set(static_cast<double>(bytes));
  }
}

void Metrics::sample(std::size_t buffered_bytes, std::span<const BrokerSample> brokers) {
  buffered_bytes_.Set(static_cast<double>(buffered_bytes));
  for (const auto& [node, gauge] : broker_connected_.children()) {
    const bool present =
        std::any_of(brokers.begin(), brokers.end(), [node = node](const BrokerSample& b) { return b.node_id == node; });
    if (!present) {
      gauge->Set(0);
      broker_inflight_.get(node, broker_label).Set(0);
    }
  }
  for (const BrokerSample& b : brokers) {
    broker_inflight_.get(b.node_id, broker_label).Set(b.in_flight);
    broker_connected_.get(b.node_id, broker_label).Set(b.connected ? 1 : 0);
  }
}

void Metrics::on_upstream_reauthentication(std::int32_t node) {
  reauthentications_.get(node, broker_label).Increment();
}

void Metrics::on_client_authentication(std::string_view mechanism, std::string_view result) {
  families_.client_authentications_total.Add({{"mechanism", std::string(mechanism)}, {"result", std::string(result)}})
      .Increment();
}

std::string Metrics::exposition() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace pp
