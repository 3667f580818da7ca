// When a Produce request must be answered by, and the one timer that holds
// every such deadline for the front end.
//
// A client waits for its Produce answer about as long as the request's own
// timeout_ms says, then gives up and sends the records again. An answer the
// proxy sends later reaches nobody, and the records it held are delivered
// beside the client's resend: a duplicate. So every acks 1/-1 request is
// answered by its deadline (docs/design/PIPELINE.md, "Answer by the client's
// deadline").
//
// Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <map>
#include <optional>

#include "proxy/net/timer.h"

namespace pp {

// How long after its receipt a Produce request of `timeout_ms` may be held:
// timeout_ms less a margin for the answer's way back and the client's own
// clock (a tenth of it, at least 100 ms and at most 1 s), never less than
// half of timeout_ms, and at most `max_hold_ms` (listener.
// max_request_hold_ms). A timeout_ms of 0 or less says nothing usable: it
// gets `max_hold_ms`.
std::int64_t produce_hold_ms(std::int32_t timeout_ms, std::int64_t max_hold_ms);

class ProduceDeadlines;

// Something answered at its deadline: on_deadline() runs once, on the loop,
// when the deadline has passed, unless it was cancelled before. A target
// must be cancelled before it is destroyed.
class DeadlineTarget {
 public:
  virtual void on_deadline() = 0;
  bool deadline_scheduled() const { return entry_.has_value(); }

 protected:
  DeadlineTarget() = default;
  ~DeadlineTarget() = default;
  DeadlineTarget(const DeadlineTarget&) = delete;
  DeadlineTarget& operator=(const DeadlineTarget&) = delete;

 private:
  friend class ProduceDeadlines;
  std::optional<std::multimap<std::uint64_t, DeadlineTarget*>::iterator> entry_;
};

// Deadlines in loop milliseconds (uv_now), earliest first, behind one timer
// armed for the earliest. Scheduling costs O(log n) and re-arms the timer
// only for a deadline earlier than every other.
class ProduceDeadlines {
 public:
  explicit ProduceDeadlines(uv_loop_t* loop);
  ~ProduceDeadlines();
  ProduceDeadlines(const ProduceDeadlines&) = delete;
  ProduceDeadlines& operator=(const ProduceDeadlines&) = delete;

  // `target` is answered at `deadline_ms` (replacing a deadline it had).
  void schedule(DeadlineTarget& target, std::uint64_t deadline_ms);
  void cancel(DeadlineTarget& target);
  std::size_t scheduled() const { return entries_.size(); }

 private:
  void arm();
  void fire();

  uv_loop_t* loop_;
  net::Timer timer_;
  std::multimap<std::uint64_t, DeadlineTarget*> entries_;
  std::optional<std::uint64_t> armed_for_;  // the deadline the timer is set for
};

}  // namespace pp
