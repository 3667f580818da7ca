#include "proxy/frontend/produce_deadlines.h"

#include <algorithm>

namespace pp {

std::int64_t produce_hold_ms(std::int32_t timeout_ms, std::int64_t max_hold_ms) {
  if (timeout_ms <= 0) return max_hold_ms;
  constexpr std::int64_t kMinMarginMs = 100;
  constexpr std::int64_t kMaxMarginMs = 1000;
  const std::int64_t timeout = timeout_ms;
  const std::int64_t margin = std::clamp<std::int64_t>(timeout / 10, kMinMarginMs, kMaxMarginMs);
  return std::min(std::max(timeout - margin, timeout / 2), max_hold_ms);
}

ProduceDeadlines::ProduceDeadlines(uv_loop_t* loop) : loop_(loop), timer_(loop) {}

ProduceDeadlines::~ProduceDeadlines() {
  for (auto& [deadline, target] : entries_) target->entry_.reset();
}

void ProduceDeadlines::schedule(DeadlineTarget& target, std::uint64_t deadline_ms) {
  cancel(target);
  target.entry_ = entries_.emplace(deadline_ms, &target);
  if (!armed_for_ || deadline_ms < *armed_for_) arm();
}

void ProduceDeadlines::cancel(DeadlineTarget& target) {
  if (!target.entry_) return;
  entries_.erase(*target.entry_);
  target.entry_.reset();
  // A timer armed for a cancelled deadline fires once for nothing and re-arms.
}

void ProduceDeadlines::arm() {
  if (entries_.empty()) {
    timer_.stop();
    armed_for_.reset();
    return;
  }
  const std::uint64_t earliest = entries_.begin()->first;
  const std::uint64_t now = uv_now(loop_);
  armed_for_ = earliest;
  timer_.start(earliest > now ? earliest - now : 0, 0, [this] { fire(); });
}

void ProduceDeadlines::fire() {
  armed_for_.reset();
  const std::uint64_t now = uv_now(loop_);
  // One at a time from the front: an answer may cancel or schedule others.
  while (!entries_.empty() && entries_.begin()->first <= now) {
    DeadlineTarget* target = entries_.begin()->second;
    entries_.erase(entries_.begin());
    target->entry_.reset();
    target->on_deadline();
  }
  arm();
}

}  // namespace pp
