#include "proxy/frontend/flow_control.h"

#include <utility>

#include "proxy/frontend/log.h"

namespace pp {

FlowControl::FlowControl(uv_loop_t* loop, MemoryBudget& budget, net::TcpListener& listener, net::Deferred& deferred,
                         FrontendCounters& counters, FrontendObserver& observer)
    : loop_(loop),
      budget_(budget),
      listener_(listener),
      deferred_(deferred),
      counters_(counters),
      observer_(observer) {}

FlowControl::~FlowControl() {
  budget_.set_available_listener(nullptr);
  budget_.set_room_listener(nullptr);
}

void FlowControl::start() {
  stopped_ = false;
  // Called from inside the sink's own completion path: resume on the next
  // loop turn, so the requests that resuming answers don't re-enter it.
  budget_.set_available_listener([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.lock()) defer([this] { resume(); });
  });
  budget_.set_room_listener([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.lock()) recheck_room();
  });
}

void FlowControl::end_pause() {
  if (!paused_) return;
  counters_.backpressure_ms_total += uv_now(loop_) - paused_since_ms_;
  paused_ = false;
  counters_.backpressure_active = false;
  observer_.on_backpressure(false);
}

void FlowControl::join(std::uint64_t id, std::shared_ptr<FlowConnection> connection) {
  roster_.emplace(id, std::move(connection));
}

// At or over the one budget: stop reading from every connection ("Bounded
// everything") until the budget says memory is back.
void FlowControl::pause() {
  paused_ = true;
  paused_since_ms_ = uv_now(loop_);
  counters_.backpressure_active = true;
  ++counters_.backpressure_pauses_total;
  observer_.on_backpressure(true);
  const bool say = paused_since_ms_ >= last_pause_log_ms_ + kPauseLogIntervalMs || last_pause_log_ms_ == 0;
  if (say) last_pause_log_ms_ = paused_since_ms_;
  update_accepting();
  frontend::log().log(say ? spdlog::level::info : spdlog::level::debug,
                      "back-pressure: {} of {} bytes of memory budget in use, pausing reads from {} clients{} "
                      "(pause {} since start)",
                      budget_.used(), budget_.limit(), roster_.size(),
                      listener_.accepting_paused() ? " and accepts" : "", counters_.backpressure_pauses_total);
  for (auto& [id, c] : roster_) c->update_reading();
}

void FlowControl::resume() {
  if (!paused_) return;
  const std::uint64_t paused_ms = uv_now(loop_) - paused_since_ms_;
  paused_ = false;
  counters_.backpressure_active = false;
  counters_.backpressure_ms_total += paused_ms;
  observer_.on_backpressure(false);
  frontend::log().debug("back-pressure over after {} ms, resuming reads", paused_ms);
  // Resuming a connection answers the frames it had buffered, which may
  // pause everyone again; stop going round then.
  for (auto& c : in_turn()) {
    if (paused_) break;
    c->update_reading();
  }
  update_accepting();
}

void FlowControl::update_accepting() {
  bool newcomer_admissible = !paused_ && !budget_.over();
  if (!newcomer_admissible && active_with(false) >= 2) {
    newcomer_admissible = under_share_held(fair_share(false)) < share_headroom();
  }
  if (newcomer_admissible) {
    listener_.resume_accepting();
  } else {
    listener_.pause_accepting();
  }
}

void FlowControl::set_active(bool active, const std::string& principal) {
  if (active) {
    ++active_;
    ++active_by_principal_[principal];
    return;
  }
  --active_;
  if (auto it = active_by_principal_.find(principal); it != active_by_principal_.end() && --it->second == 0) {
    active_by_principal_.erase(it);
  }
  recheck_shares();
}

std::size_t FlowControl::fair_share(bool asker_counted, const std::string& principal) const {
  const auto it = active_by_principal_.find(principal);
  const std::size_t own = (it == active_by_principal_.end() ? 0 : it->second) + (asker_counted ? 0 : 1);
  const std::size_t principals = active_by_principal_.size() + (it == active_by_principal_.end() ? 1 : 0);
  return budget_.limit() / std::max<std::size_t>(principals, 1) / std::max<std::size_t>(own, 1);
}

std::size_t FlowControl::under_share_held(std::size_t share) {
  const std::uint64_t now = uv_now(loop_);
  if (under_share_held_known_ && now == under_share_held_ms_ && share == under_share_held_share_) {
    return under_share_held_;
  }
  std::size_t held = 0;
  for (const auto& [id, c] : roster_) {
    const std::size_t bytes = c->held_bytes();
    if (bytes < share) held += bytes;
  }
  under_share_held_ = held;
  under_share_held_ms_ = now;
  under_share_held_share_ = share;
  under_share_held_known_ = true;
  return held;
}

bool FlowControl::headroom_admits(bool asker_counted, std::size_t announced) {
  if (active_with(asker_counted) < 2) return false;
  return under_share_held(fair_share(asker_counted)) + announced <= share_headroom();
}

void FlowControl::count_share_pause() {
  ++counters_.share_pauses_total;
  observer_.on_share_pause();
}

// Fewer active connections: a larger share for each. Connections that had
// stopped reading at their share may go on (once per loop turn at most).
void FlowControl::recheck_shares() {
  if (share_recheck_scheduled_ || stopped_) return;
  share_recheck_scheduled_ = true;
  defer([this] {
    share_recheck_scheduled_ = false;
    for (auto& c : in_turn()) {
      if (!c->reading()) c->update_reading();
    }
  });
}

// Room someone waited for is free (MemoryBudget::want_room): each connection
// looks again, in turn, on the next loop turn; the first may take the room
// and the others then wait again.
void FlowControl::recheck_room() {
  if (room_recheck_scheduled_ || stopped_) return;
  room_recheck_scheduled_ = true;
  defer([this] {
    room_recheck_scheduled_ = false;
    for (auto& c : in_turn()) c->update_reading();
  });
}

void FlowControl::defer(std::function<void()> fn) {
  if (stopped_) return;
  deferred_.post(std::move(fn));
}

std::vector<std::shared_ptr<FlowConnection>> FlowControl::in_turn() {
  std::vector<std::shared_ptr<FlowConnection>> out;
  out.reserve(roster_.size());
  for (auto& [id, c] : roster_) out.push_back(c);
  if (!out.empty()) {
    std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(take_turn() % out.size()), out.end());
  }
  return out;
}

}  // namespace pp
