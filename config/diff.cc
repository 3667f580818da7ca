#include "config/diff.h"

#include <algorithm>
#include <string>

#include "config/schema.h"

namespace pp::config {

std::vector<KeyChange> diff_settings(const Settings& before, const Settings& after) {
  std::vector<KeyChange> changes;
  visit_keys(
      [&](const KeySpec& spec, const auto& was, const auto& now) {
        if (was == now) return;
        changes.push_back(
            KeyChange{spec.full_name(), format_value(was), format_value(now), spec.apply == Apply::kLive});
      },
      before, after);
  // Not in the key schema (principal_rules.h): compared whole, restart-only.
  if (before.listener.principals != after.listener.principals) {
    changes.push_back(KeyChange{"listener.principals", std::to_string(before.listener.principals.size()) + " entries",
                                std::to_string(after.listener.principals.size()) + " entries", false});
  }
  return changes;
}

Settings with_live_changes(const Settings& running, const Settings& reloaded) {
  Settings out = running;
  visit_keys(
      [](const KeySpec& spec, auto& field, const auto& fresh) {
        if (spec.apply == Apply::kLive) field = fresh;
      },
      out, reloaded);
  return out;
}

bool needs_restart(const std::vector<KeyChange>& changes) {
  return std::any_of(changes.begin(), changes.end(), [](const KeyChange& c) { return !c.live; });
}

}  // namespace pp::config
