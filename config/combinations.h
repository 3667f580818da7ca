// Internal to pp_config: rules that involve more than one key, checked after
// each key passed its own checks (a key that failed is left out, so one typo
// does not also produce a cascade of "impossible combination" errors).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/settings.h"

namespace pp::config {

struct KeyFacts {
  std::string file_name;
  bool file_missing = false;
  // Keys given in the file or by --set, and where.
  std::map<std::string, Location, std::less<>> present;
  // Keys whose value failed its own check.
  std::set<std::string, std::less<>> bad;
  // The [upstream] header, where a missing bootstrap_servers is reported.
  std::optional<Location> upstream_table;
};

void check_combinations(const Settings& s, const KeyFacts& facts, std::vector<ConfigError>& errors);

}  // namespace pp::config
