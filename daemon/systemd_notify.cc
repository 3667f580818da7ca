#include "daemon/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <string>

namespace pp {

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  under_systemd_ = socket != nullptr && *socket != '\0';
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_period_ = std::chrono::milliseconds(usec / 2000);
  }
}

void SystemdNotifier::send(const std::string& message) const {
  if (under_systemd_) sd_notify(0, message.c_str());
}

void SystemdNotifier::ready(std::string_view status) const {
  send("READY=1" + (status.empty() ? std::string() : "\nSTATUS=" + std::string(status)));
}

void SystemdNotifier::stopping(std::string_view status) const {
  send("STOPPING=1" + (status.empty() ? std::string() : "\nSTATUS=" + std::string(status)));
}

void SystemdNotifier::watchdog() const {
  send("WATCHDOG=1");
}

void SystemdNotifier::status(std::string_view text) const {
  send("STATUS=" + std::string(text));
}

}  // namespace pp
