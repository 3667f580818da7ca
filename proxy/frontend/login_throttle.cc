#include "proxy/frontend/login_throttle.h"

#include <algorithm>

namespace pp {

std::uint64_t LoginThrottle::delay_after(std::uint32_t failures) {
  if (failures == 0) return 0;
  const std::uint32_t doublings = std::min<std::uint32_t>(failures - 1, 16);
  return std::min(kMaxDelayMs, kBaseDelayMs << doublings);
}

std::uint64_t LoginThrottle::record_failure(std::string_view address, std::uint64_t now_ms) {
  auto found = by_address_.find(std::string(address));
  if (found == by_address_.end()) {
    if (entries_.size() >= max_addresses_ && !entries_.empty()) {
      by_address_.erase(entries_.back().address);
      entries_.pop_back();
    }
    entries_.push_front(Entry{std::string(address), 0, now_ms});
    found = by_address_.emplace(entries_.front().address, entries_.begin()).first;
  } else {
    entries_.splice(entries_.begin(), entries_, found->second);
  }
  Entry& e = *found->second;
  if (now_ms - e.last_ms > kForgetAfterMs) e.failures = 0;
  e.failures = e.failures == UINT32_MAX ? e.failures : e.failures + 1;
  e.last_ms = now_ms;
  return delay_after(e.failures);
}

std::uint64_t LoginThrottle::delay_for(std::string_view address, std::uint64_t now_ms) const {
  const auto found = by_address_.find(std::string(address));
  if (found == by_address_.end()) return delay_after(1);
  const Entry& e = *found->second;
  return delay_after(now_ms - e.last_ms > kForgetAfterMs ? 1 : e.failures + 1);
}

std::string_view peer_address(std::string_view peer) {
  if (peer.starts_with('[')) {
    const auto close = peer.find(']');
    return close == std::string_view::npos ? peer : peer.substr(1, close - 1);
  }
  const auto colon = peer.rfind(':');
  return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

}  // namespace pp
