#include "metrics/health.h"

namespace pp {

Health::Health(std::chrono::milliseconds stall_after) : stall_after_(stall_after), last_beat_ns_(now_ns()) {}

std::int64_t Health::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A timestamp publishes nothing else, so relaxed is enough for the beat.
void Health::beat() {
  last_beat_ns_.store(now_ns(), std::memory_order_relaxed);
}

void Health::set_ready(bool ready, NotReady reason) {
  reason_.store(reason, std::memory_order_release);
  ready_.store(ready, std::memory_order_release);
}

void Health::set_draining() {
  draining_.store(true, std::memory_order_release);
}

std::chrono::milliseconds Health::since_last_beat() const {
  const std::int64_t age = now_ns() - last_beat_ns_.load(std::memory_order_relaxed);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(age));
}

bool Health::live() const {
  return since_last_beat() < stall_after_;
}

bool Health::ready() const {
  return ready_.load(std::memory_order_acquire) && !draining();
}

}  // namespace pp
