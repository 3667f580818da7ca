// What a SIGHUP changes: the keys that differ between the running settings
// and the re-read ones, and which of them the daemon can apply without a
// restart (log level, timeouts, linger, batch size, compression: values read
// afresh on each use). The rest (addresses, bootstrap list, memory budget,
// window cap, ...) shape objects built at start-up, so they wait for a restart.
//
// On SIGHUP the daemon does, in effect:
//   auto reloaded = config::load_settings(source);          // errors: keep running, log them
//   auto changes = config::diff_settings(running, *reloaded);
//   running = config::with_live_changes(running, *reloaded);  // apply these
//   for (auto& c : changes) if (!c.live) log "c.key changed; needs a restart"
#pragma once

#include <string>
#include <vector>

#include "config/settings.h"

namespace pp::config {

struct KeyChange {
  std::string key;     // "producer.linger_ms"
  std::string before;  // TOML spelling: 5, "gzip", ["a:1"]
  std::string after;
  bool live = false;  // true: applies on SIGHUP; false: needs a restart
  bool operator==(const KeyChange&) const = default;
};

// Changed keys, in schema (docs/design/INTERFACES.md) order.
std::vector<KeyChange> diff_settings(const Settings& before, const Settings& after);

// `running` with every live key taken from `reloaded`, the rest kept: what is
// in effect after a SIGHUP (restart-only changes wait for the restart).
Settings with_live_changes(const Settings& running, const Settings& reloaded);

// True when some change in `changes` needs a restart.
bool needs_restart(const std::vector<KeyChange>& changes);

}  // namespace pp::config
