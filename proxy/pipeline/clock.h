// Time as the pipeline sees it: milliseconds on a monotonic clock. The daemon
// reads libuv's loop clock; tests move a manual one.
#pragma once

#include <cstdint>

namespace pp {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_ms() const = 0;
};

class ManualClock final : public Clock {
 public:
  std::int64_t now_ms() const override { return now_; }
  void advance(std::int64_t ms) { now_ += ms; }
  void set(std::int64_t ms) { now_ = ms; }

 private:
  std::int64_t now_ = 1'000'000;
};

}  // namespace pp
