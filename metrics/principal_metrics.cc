#include "metrics/principal_metrics.h"

#include "metrics/metric_families.h"

namespace pp {

PrincipalMetrics::Series& PrincipalMetrics::series(std::string_view principal) {
  std::string key(principal);
  if (auto it = series_.find(key); it != series_.end()) return it->second;
  // Past the cap, a new name is counted as "other" (one more series).
  if (series_.size() >= kMaxPrincipalSeries) key = std::string(kOther);
  auto [it, added] = series_.try_emplace(key);
  if (added) {
    it->second.label = key;
    const prometheus::Labels labels{{"principal", key}};
    it->second.requests = &families_.principal_requests_total.Add(labels);
    it->second.produce_bytes = &families_.principal_produce_bytes_total.Add(labels);
    it->second.throttle_seconds = &families_.principal_throttle_seconds_total.Add(labels);
  }
  return it->second;
}

void PrincipalMetrics::on_request(std::string_view principal) {
  series(principal).requests->Increment();
}

void PrincipalMetrics::on_produce(std::string_view principal, std::int64_t bytes, std::int64_t throttle_ms) {
  Series& s = series(principal);
  s.produce_bytes->Increment(static_cast<double>(bytes));
  if (throttle_ms > 0) s.throttle_seconds->Increment(static_cast<double>(throttle_ms) / 1000.0);
}

void PrincipalMetrics::on_denied(std::string_view principal, std::string_view operation) {
  Series& s = series(principal);
  const std::string op(operation);
  auto it = s.denied.find(op);
  if (it == s.denied.end()) {
    auto& counter = families_.principal_authorization_denied_total.Add({{"principal", s.label}, {"operation", op}});
    it = s.denied.emplace(op, &counter).first;
  }
  it->second->Increment();
}

}  // namespace pp
