// Liveness and readiness, as /healthz and /readyz report them
// (docs/design/INTERFACES.md "HTTP endpoints"). Written by the loop thread and
// the daemon, read by the HTTP server's threads: atomics only ("One loop thread
// owns all proxy state", docs/design/ARCHITECTURE.md, rules of the house).
//
// Liveness is a heartbeat: a uv timer on the loop calls beat() every
// kBeatInterval; the loop is alive while the last beat is younger than
// stall_after. A loop stuck in a callback (or a daemon that forgot the timer)
// stops beating, and /healthz turns 503 within a second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace pp {

// Why /readyz answers 503 while not draining.
enum class NotReady : std::uint8_t {
  kStarting,      // the listener, upstream metadata or a producer id is not there yet
  kSpoolFull,     // spool mode: the spool is at spool.max_bytes
  kSpoolFailing,  // spool mode: its last write failed
};

class Health {
 public:
  static constexpr std::chrono::milliseconds kBeatInterval{200};
  static constexpr std::chrono::milliseconds kStallAfter{1000};

  // Starts alive (as if it had just beaten), not ready, not draining.
  explicit Health(std::chrono::milliseconds stall_after = kStallAfter);

  Health(const Health&) = delete;
  Health& operator=(const Health&) = delete;

  // Loop thread, from a repeating timer of kBeatInterval.
  void beat();
  // The daemon: true once the client listener is up, upstream metadata is
  // known and a producer id is held; false if one of those is lost. In
  // spool mode, "accepting": true while the listener is up and the spool has
  // room and writes, Kafka reachable or not. `reason` says why when false.
  void set_ready(bool ready, NotReady reason = NotReady::kStarting);
  // The daemon, when a drain starts. One way: readiness stays false after it,
  // whatever set_ready says, so a producer id won in the middle of a drain
  // does not invite new traffic.
  void set_draining();

  // Any thread.
  bool live() const;
  bool ready() const;
  bool draining() const { return draining_.load(std::memory_order_acquire); }
  // Why not ready, as last set (meaningless while ready()).
  NotReady not_ready_reason() const { return reason_.load(std::memory_order_acquire); }
  std::chrono::milliseconds since_last_beat() const;

 private:
  static std::int64_t now_ns();

  const std::chrono::milliseconds stall_after_;
  std::atomic<std::int64_t> last_beat_ns_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  std::atomic<NotReady> reason_{NotReady::kStarting};
};

}  // namespace pp
