// The daemon's side of systemd's service protocol (sd_notify(3)): READY=1 once
// serving, STOPPING=1 when draining starts, WATCHDOG=1 at half the interval
// systemd asked for. Outside systemd (no NOTIFY_SOCKET) every call is a no-op.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace pp {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET / WATCHDOG_USEC once (sd_watchdog_enabled).
  SystemdNotifier();

  bool under_systemd() const { return under_systemd_; }
  // How often to send WATCHDOG=1: half of WATCHDOG_USEC, or nullopt.
  std::optional<std::chrono::milliseconds> watchdog_period() const { return watchdog_period_; }

  void ready(std::string_view status = {}) const;
  void stopping(std::string_view status = {}) const;
  void watchdog() const;
  void status(std::string_view text) const;

 private:
  void send(const std::string& message) const;

  bool under_systemd_ = false;
  std::optional<std::chrono::milliseconds> watchdog_period_;
};

}  // namespace pp
