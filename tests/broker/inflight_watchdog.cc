#include "tests/broker/inflight_watchdog.h"

#include <algorithm>

namespace pp::test_broker {

bool InflightWatchdog::on_received(std::int64_t producer_id, int window) {
  int& held = held_[producer_id];
  const bool violation = held >= window;
  if (violation) ++violations_;
  ++held;
  max_inflight_ = std::max(max_inflight_, held);
  return violation;
}

void InflightWatchdog::on_released(std::int64_t producer_id) {
  auto it = held_.find(producer_id);
  if (it == held_.end()) return;
  if (--it->second <= 0) held_.erase(it);
}

int InflightWatchdog::held(std::int64_t producer_id) const {
  auto it = held_.find(producer_id);
  return it == held_.end() ? 0 : it->second;
}

}  // namespace pp::test_broker
