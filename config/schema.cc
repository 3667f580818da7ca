#include "config/schema.h"

#include <algorithm>

namespace pp::config {

std::vector<KeySpec> all_keys() {
  std::vector<KeySpec> keys;
  const Settings dummy;
  visit_keys([&](const KeySpec& spec, const auto&) { keys.push_back(spec); }, dummy);
  return keys;
}

std::vector<std::string_view> all_sections() {
  std::vector<std::string_view> sections;
  for (const auto& k : all_keys()) {
    if (std::find(sections.begin(), sections.end(), k.section) == sections.end()) {
      sections.push_back(k.section);
    }
  }
  return sections;
}

const KeySpec* find_key(std::string_view section, std::string_view name) {
  // Built once: callers look keys up for every node of a file.
  static const std::vector<KeySpec> keys = all_keys();
  const auto it =
      std::find_if(keys.begin(), keys.end(), [&](const KeySpec& k) { return k.section == section && k.name == name; });
  return it == keys.end() ? nullptr : &*it;
}

std::string format_value(const std::string& v) {
  std::string out = "\"";
  for (const char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string format_value(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += format_value(v[i]);
  }
  return out + "]";
}

std::string format_value(std::int64_t v) {
  return std::to_string(v);
}

std::string format_value(bool v) {
  return v ? "true" : "false";
}

}  // namespace pp::config
