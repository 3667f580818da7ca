// Dotted section names ("upstream.tls") as nested TOML tables: [upstream.tls]
// in a file is the table "tls" inside the table "upstream".
#pragma once

#include <string_view>

#include "config/document.h"

namespace pp::config {

// The node at a dotted section path, or nullptr if some part is missing.
const toml::node* find_section(const toml::table& root, std::string_view dotted);
// The table at a dotted path, created (with its parents) if missing; nullptr
// if some part is there but not a table (the file's own check reports that).
toml::table* ensure_section(toml::table& root, std::string_view dotted);

}  // namespace pp::config
