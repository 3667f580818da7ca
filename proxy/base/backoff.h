// Exponential backoff, the one formula of the proxy: `initial` doubled per
// failure, at most `max`. Reconnects add a jitter, as Kafka's clients do
// (Java's ExponentialBackoff with reconnect.backoff.ms / .max.ms and a jitter
// of 0.2), so many proxies that lost the same broker don't reconnect in step;
// the pipeline's retries use the plain value (one writer, tests on a manual
// clock).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace pp {

// initial * 2^doublings, capped at max (doublings clamped to 0..30).
inline std::uint64_t backoff_ms(std::uint64_t initial_ms, std::uint64_t max_ms, int doublings) {
  const int exp = std::clamp(doublings, 0, 30);
  const double grown = static_cast<double>(initial_ms) * std::pow(2.0, exp);
  return static_cast<std::uint64_t>(std::min(grown, static_cast<double>(max_ms)));
}

class ExponentialBackoff {
 public:
  ExponentialBackoff(std::uint64_t initial_ms, std::uint64_t max_ms, double jitter = 0.2)
      : initial_ms_(std::max<std::uint64_t>(initial_ms, 1)),
        max_ms_(std::max(max_ms, initial_ms_)),
        jitter_(jitter),
        rng_(std::random_device{}()) {}

  // The wait before attempt number `failures + 1` (failures >= 1).
  std::uint64_t backoff_ms(int failures) {
    const double base = static_cast<double>(pp::backoff_ms(initial_ms_, max_ms_, failures - 1));
    std::uniform_real_distribution<double> dist(1.0 - jitter_, 1.0 + jitter_);
    const double jittered = base * dist(rng_);
    return static_cast<std::uint64_t>(std::clamp(jittered, 1.0, static_cast<double>(max_ms_) * (1.0 + jitter_)));
  }

 private:
  std::uint64_t initial_ms_;
  std::uint64_t max_ms_;
  double jitter_;
  std::minstd_rand rng_;
};

}  // namespace pp
