// Internal to pp_config: the parsed TOML with the --set overrides merged in,
// and where each overridden key came from, so validation can point at the
// file's line or at the --set option that supplied a value.
#pragma once

#include <toml++/toml.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/settings.h"

namespace pp::config {

struct Document {
  toml::table root;
  std::string file_name;
  // The default config path did not exist: keys come from defaults and --set.
  bool file_missing = false;
  // "section.key" -> the --set that last set it.
  std::map<std::string, Location, std::less<>> overridden;
};

// Turns the document into Settings, appending every problem to `errors`: unknown
// sections and keys (with suggestions), wrong types, out-of-range values, a
// missing bootstrap_servers and impossible combinations of keys. The Settings
// returned is meaningful only when nothing was appended.
Settings read_settings(const Document& doc, std::vector<ConfigError>& errors);

}  // namespace pp::config
