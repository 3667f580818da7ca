// The per-principal series (principal_requests_total, principal_produce_bytes_total,
// principal_throttle_seconds_total, principal_authorization_denied_total):
// the first kMaxPrincipalSeries principal names seen get their own
// `principal` label; every later one is counted as principal="other", so
// authenticated names (a users file, a CA's certificates) cannot grow the
// number of series without bound. Loop thread only.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pp {

struct MetricFamilies;

class PrincipalMetrics {
 public:
  static constexpr std::size_t kMaxPrincipalSeries = 100;
  static constexpr std::string_view kOther = "other";

  explicit PrincipalMetrics(MetricFamilies& families) : families_(families) {}

  void on_request(std::string_view principal);
  void on_produce(std::string_view principal, std::int64_t bytes, std::int64_t throttle_ms);
  // operation: "write", "describe" or "idempotent_write".
  void on_denied(std::string_view principal, std::string_view operation);

 private:
  struct Series {
    std::string label;  // the principal, or "other"
    prometheus::Counter* requests = nullptr;
    prometheus::Counter* produce_bytes = nullptr;
    prometheus::Counter* throttle_seconds = nullptr;
    std::unordered_map<std::string, prometheus::Counter*> denied;  // by operation (three at most)
  };
  // The principal's series, or "other"'s once kMaxPrincipalSeries names have theirs.
  Series& series(std::string_view principal);

  MetricFamilies& families_;
  std::unordered_map<std::string, Series> series_;
};

}  // namespace pp
