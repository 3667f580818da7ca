// Failed client logins slowed per peer address: the answer to a failed
// authentication waits a delay that doubles with each recent failure from
// the same address (250 ms, 500 ms, ... at most 5 s), so guessing passwords
// from one address costs time while other clients are served meanwhile
// (the wait is a timer, never a blocked loop). A login abandoned mid-exchange
// (the peer closed before the answer) is recorded as a failure too, so
// hanging up before the delayed answer does not escape the slow-down
// (note_abandoned_login, sasl_handler.h). A failure is recent for 60 s
// after the address's last one. The table is bounded: at most 4096
// addresses, the least recently failed forgotten first. Loop thread only;
// std only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pp {

class LoginThrottle {
 public:
  static constexpr std::uint64_t kBaseDelayMs = 250;
  static constexpr std::uint64_t kMaxDelayMs = 5000;
  static constexpr std::uint64_t kForgetAfterMs = 60000;
  static constexpr std::size_t kMaxAddresses = 4096;

  explicit LoginThrottle(std::size_t max_addresses = kMaxAddresses) : max_addresses_(max_addresses) {}

  // Records a failure from `address` at `now_ms` and returns how long its
  // answer should wait.
  std::uint64_t record_failure(std::string_view address, std::uint64_t now_ms);
  // The delay the next failure from `address` would get, without recording.
  std::uint64_t delay_for(std::string_view address, std::uint64_t now_ms) const;
  std::size_t addresses() const { return entries_.size(); }

 private:
  struct Entry {
    std::string address;
    std::uint32_t failures = 0;
    std::uint64_t last_ms = 0;
  };
  static std::uint64_t delay_after(std::uint32_t failures);

  std::size_t max_addresses_;
  std::list<Entry> entries_;  // most recently failed first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_address_;
};

// The address part of "host:port" or "[v6]:port" (what TcpConnection::
// peer_name gives): the key failures are counted under.
std::string_view peer_address(std::string_view peer);

}  // namespace pp
