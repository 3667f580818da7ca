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

// The node of a section, dotted for a nested one ("upstream.sasl" is
// root["upstream"]["sasl"]), or nullptr when some part is missing or not a table.
inline const toml::node* section_table(const toml::table& root, std::string_view section) {
  const toml::table* table = &root;
  const toml::node* node = nullptr;
  while (true) {
    const auto dot = section.find('.');
    node = table->get(section.substr(0, dot));
    if (dot == std::string_view::npos || node == nullptr || !node->is_table()) return node;
    table = node->as_table();
    section.remove_prefix(dot + 1);
  }
}

// The same, creating missing tables on the way (for --set); nullptr when a
// part exists but is not a table (reported from the file).
inline toml::table* section_table_for_update(toml::table& root, std::string_view section) {
  toml::table* table = &root;
  while (true) {
    const auto dot = section.find('.');
    const std::string_view part = section.substr(0, dot);
    if (table->get(part) == nullptr) table->insert(part, toml::table{});
    toml::node* node = table->get(part);
    if (!node->is_table()) return nullptr;
    table = node->as_table();
    if (dot == std::string_view::npos) return table;
    section.remove_prefix(dot + 1);
  }
}

// Turns the document into Settings, appending every problem to `errors`: unknown
// sections and keys (with suggestions), wrong types, out-of-range values, a
// missing bootstrap_servers and impossible combinations of keys. The Settings
// returned is meaningful only when nothing was appended.
Settings read_settings(const Document& doc, std::vector<ConfigError>& errors);

}  // namespace pp::config
