#include "config/print_settings.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <type_traits>
#include <vector>

namespace pp::config {
namespace {

// A TOML basic string: quotes, backslashes and control characters escaped,
// so any value that loaded prints back as one line that loads the same.
std::string toml_string(std::string_view v) {
  std::string out = "\"";
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          std::array<char, 8> escaped{};
          std::snprintf(escaped.data(), escaped.size(), "\\u%04X", static_cast<unsigned>(u));
          out += escaped.data();
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string toml_value(const std::string& v) {
  return toml_string(v);
}
std::string toml_value(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i > 0 ? ", " : "") + toml_string(v[i]);
  return out + "]";
}
std::string toml_value(std::int64_t v) {
  return std::to_string(v);
}
std::string toml_value(bool v) {
  return v ? "true" : "false";
}
template <class E>
  requires std::is_enum_v<E>
std::string toml_value(E v) {
  return toml_string(to_string(v));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_secret_key(const KeySpec& spec) {
  constexpr std::array<std::string_view, 5> kSecretWords{"password", "secret", "token", "credential", "private_key"};
  constexpr std::array<std::string_view, 4> kNotTheSecret{"_file", "_env", "_command", "_ms"};
  const std::string_view name = spec.name;
  const bool mentions =
      std::any_of(kSecretWords.begin(), kSecretWords.end(), [&](auto w) { return name.find(w) != name.npos; });
  const bool points_elsewhere =
      std::any_of(kNotTheSecret.begin(), kNotTheSecret.end(), [&](auto s) { return ends_with(name, s); });
  return mentions && !points_elsewhere;
}

std::string print_settings(const Settings& settings, const std::function<bool(const KeySpec&)>& is_secret) {
  const Settings defaults;
  std::string body;
  std::vector<std::string> redacted;
  std::string_view section;
  visit_keys(
      [&](const KeySpec& spec, const auto& value, const auto& default_value) {
        if (spec.section != section) {
          section = spec.section;
          body += "\n[" + std::string(section) + "]\n";
        }
        body += std::string(spec.name) + " = ";
        if (is_secret(spec)) {
          redacted.push_back(spec.full_name());
          body += toml_string(kRedacted) + "\n";
          return;
        }
        body += toml_value(value);
        body += value == default_value ? "  # default\n" : "\n";
      },
      settings, defaults);
  // Not in the key schema (principal_rules.h): one table per entry, last.
  for (const auto& rule : settings.listener.principals) {
    body += "\n[[listener.principals]]\nname = " + toml_string(rule.name) + "\ntopics = " + toml_value(rule.topics) +
            "\nidempotent_write = " + toml_value(rule.idempotent_write) +
            "\nproduce_bytes_per_second = " + toml_value(rule.produce_bytes_per_second) + "\n";
  }

  std::string out =
      "# The effective configuration: the file, then the --set overrides, then\n"
      "# the defaults, in docs/design/INTERFACES.md's order.\n";
  if (redacted.empty()) {
    out +=
        "# Redacted: none. Secrets are never values here: they are read from the\n"
        "# files and environment variables the [upstream.sasl] keys name.\n";
  } else {
    out += "# Redacted (the value is a credential):";
    for (const auto& key : redacted) out += " " + key;
    out += "\n";
  }
  return out + body;
}

}  // namespace pp::config
