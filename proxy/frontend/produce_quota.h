// One principal's produce byte-rate quota, measured and enforced as Kafka's
// broker does (KIP-13 quotas, KIP-219 throttling): the bytes of each Produce
// request are recorded in a rate sampled over kSamples windows of kSampleMs;
// when the rate is over the quota the request's throttle time is
//   (rate - quota) / quota * window
// with Kafka's window rule (Rate.windowSize: the time since the oldest live
// sample, but never less than kSamples - 1 whole samples, so a quiet start
// does not make a small amount look like a high rate). The caller answers at
// once with that throttle_time_ms and mutes the connection for as long.
//
// Kafka's sample count (quota.window.num = 11), with samples of 100 ms
// instead of its 1 s default (quota.window.size.seconds): a burst the window
// admits is about one second of quota, not ten, so a throttled principal is
// held near its quota over periods of seconds, not minutes.
// Shared by every connection of the principal. Loop thread only; time is the
// caller's (loop ms), so the arithmetic is tested without a clock.
#pragma once

#include <array>
#include <cstdint>

namespace pp {

class ProduceQuota {
 public:
  static constexpr std::size_t kSamples = 11;
  static constexpr std::uint64_t kSampleMs = 100;
  // The longest one request is throttled, so a mute is bounded even after a
  // request far larger than a second's quota. Longer than the window on
  // purpose: a request of many seconds' quota is held for all of them, not
  // forgotten by the window after one.
  static constexpr std::uint64_t kMaxThrottleMs = 60000;

  explicit ProduceQuota(std::uint64_t bytes_per_second) : bytes_per_second_(bytes_per_second) {}

  // Records a request of `bytes` at `now_ms`; its throttle time in ms (0:
  // within the quota). `now_ms` never goes back.
  std::uint64_t record(std::uint64_t bytes, std::uint64_t now_ms);
  // The measured rate (bytes per second) at `now_ms`.
  double rate(std::uint64_t now_ms);
  std::uint64_t bytes_per_second() const { return bytes_per_second_; }

 private:
  struct Sample {
    std::uint64_t start_ms = 0;
    double bytes = 0;
    bool used = false;
  };
  void purge(std::uint64_t now_ms);
  Sample& current(std::uint64_t now_ms);
  std::uint64_t window_ms(std::uint64_t now_ms) const;

  std::uint64_t bytes_per_second_;
  std::array<Sample, kSamples> samples_{};
  std::size_t current_ = 0;
};

}  // namespace pp
