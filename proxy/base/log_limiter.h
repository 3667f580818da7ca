// Rate-limits one kind of repeated log line (a broker that stays down, a
// client that keeps sending garbage), so a long outage writes a line per
// interval with a count of what it held back, not a line per attempt.
//
//   LogLimiter limiter{std::chrono::seconds(10)};  // one per broker, say
//   if (auto held_back = limiter.admit(net::now_ms(loop)))
//     log().warn("broker {} unreachable: {} ({} more since last said)", node, why, *held_back);
//
// Single-threaded (the loop's), std only, no spdlog: it decides, the caller logs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace pp {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::milliseconds interval)
      : interval_ms_(static_cast<std::uint64_t>(interval.count())) {}

  // now_ms: any monotonic clock in milliseconds. When the line may be logged,
  // returns how many were held back since the last one let through;
  // otherwise nullopt, and the line is counted as held back.
  std::optional<std::uint64_t> admit(std::uint64_t now_ms) {
    if (last_ms_ && now_ms - *last_ms_ < interval_ms_) {
      ++held_back_;
      return std::nullopt;
    }
    last_ms_ = now_ms;
    const std::uint64_t held = held_back_;
    held_back_ = 0;
    return held;
  }

  // After the condition clears (the broker is back): the next occurrence is
  // logged at once, and the count held back is returned so the caller can say
  // "recovered after N more failures".
  std::uint64_t reset() {
    const std::uint64_t held = held_back_;
    last_ms_.reset();
    held_back_ = 0;
    return held;
  }

 private:
  std::uint64_t interval_ms_;
  std::optional<std::uint64_t> last_ms_;
  std::uint64_t held_back_ = 0;
};

}  // namespace pp
