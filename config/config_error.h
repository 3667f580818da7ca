// One problem found in a configuration, located the way compilers do, so
// editors and CI logs link straight to it: FILE:LINE:COLUMN: message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pp::config {

// Where a value came from. `source` is the config file's path as given, or
// "--set" for a command-line override, whose `line` is then the override's
// 1-based position among the --set options and `column` the 1-based offset
// in its KEY=VALUE text (1 for the key, the first value character for the value).
struct Location {
  std::string source;
  std::int64_t line = 1;
  std::int64_t column = 1;
  bool operator==(const Location&) const = default;
};

inline constexpr char kOverrideSource[] = "--set";

struct ConfigError {
  Location where;
  std::string message;

  // "FILE:LINE:COLUMN: message"
  std::string to_string() const {
    return where.source + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " + message;
  }
};

// Every error, one per line, in file order then --set order: what
// --check-config prints to stderr.
inline std::string format_errors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) out += e.to_string() + "\n";
  return out;
}

}  // namespace pp::config
