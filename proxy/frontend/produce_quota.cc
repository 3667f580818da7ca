#include "proxy/frontend/produce_quota.h"

#include <algorithm>
#include <cmath>

namespace pp {

// A sample older than the whole window counts no more (SampledStat's
// purgeObsoleteSamples).
void ProduceQuota::purge(std::uint64_t now_ms) {
  for (Sample& s : samples_) {
    if (s.used && now_ms - s.start_ms >= kSamples * kSampleMs) s = Sample{};
  }
}

// The sample `now_ms` falls in: the current one while it is not complete,
// else the next slot (the oldest), started afresh.
ProduceQuota::Sample& ProduceQuota::current(std::uint64_t now_ms) {
  Sample& c = samples_[current_];
  if (c.used && now_ms - c.start_ms < kSampleMs) return c;
  if (c.used) current_ = (current_ + 1) % kSamples;
  Sample& next = samples_[current_];
  next = Sample{now_ms, 0, true};
  return next;
}

std::uint64_t ProduceQuota::window_ms(std::uint64_t now_ms) const {
  std::uint64_t oldest = now_ms;
  for (const Sample& s : samples_) {
    if (s.used) oldest = std::min(oldest, s.start_ms);
  }
  std::uint64_t elapsed = now_ms - oldest;
  const std::uint64_t full = elapsed / kSampleMs;
  if (full < kSamples - 1) elapsed += (kSamples - 1 - full) * kSampleMs;
  return elapsed;
}

double ProduceQuota::rate(std::uint64_t now_ms) {
  purge(now_ms);
  double total = 0;
  for (const Sample& s : samples_) total += s.bytes;
  return total * 1000.0 / static_cast<double>(window_ms(now_ms));
}

std::uint64_t ProduceQuota::record(std::uint64_t bytes, std::uint64_t now_ms) {
  if (bytes_per_second_ == 0) return 0;
  purge(now_ms);
  current(now_ms).bytes += static_cast<double>(bytes);
  const double measured = rate(now_ms);
  const auto quota = static_cast<double>(bytes_per_second_);
  if (measured <= quota) return 0;
  const double throttle = (measured - quota) / quota * static_cast<double>(window_ms(now_ms));
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(std::llround(throttle)), kMaxThrottleMs);
}

}  // namespace pp
