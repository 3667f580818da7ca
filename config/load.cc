// File reading and --set overrides; the checks themselves are in
// read_settings.cc and combinations.cc.
#include "config/load.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "config/document.h"
#include "config/schema.h"
#include "config/suggest.h"

namespace pp::config {
namespace {

struct FileText {
  std::string text;
  int error = 0;  // errno; 0 when read
};

FileText read_file(const std::string& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return FileText{{}, errno};
  FileText out;
  char buffer[16384];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0) out.text.append(buffer, n);
  // fopen succeeds on a directory; the read is what fails (EISDIR).
  if (std::ferror(f.get())) return FileText{{}, errno != 0 ? errno : EIO};
  return out;
}

Location parse_error_location(const toml::parse_error& e, std::string_view file_name) {
  const auto& begin = e.source().begin;
  return Location{std::string(file_name), std::max<std::int64_t>(begin.line, 1),
                  std::max<std::int64_t>(begin.column, 1)};
}

// The value of one --set as a TOML node, or nullptr if it is not TOML.
std::unique_ptr<toml::node> parse_toml_value(std::string_view value) {
  try {
    toml::table t = toml::parse("v = " + std::string(value));
    // A value with a newline could smuggle in more keys: only one key is a value.
    if (t.size() != 1 || t.get("v") == nullptr) return nullptr;
    std::unique_ptr<toml::node> out;
    t.get("v")->visit([&](auto&& n) { out = std::make_unique<std::remove_cvref_t<decltype(n)>>(n); });
    return out;
  } catch (const toml::parse_error&) {
    return nullptr;
  }
}

// Bare words for string keys ("--set listener.address=0.0.0.0:9092") and a
// bare comma list for bootstrap_servers; otherwise the TOML value as typed.
// Text that is not TOML becomes a string, so a bad number reads as the usual
// "must be an integer, not a string".
std::unique_ptr<toml::node> override_value(const KeySpec& spec, std::string_view value) {
  auto parsed = parse_toml_value(value);
  Settings probe;
  bool takes_string = false;
  bool takes_list = false;
  visit_keys(
      [&](const KeySpec& k, auto& field) {
        if (k.section != spec.section || k.name != spec.name) return;
        using T = std::remove_cvref_t<decltype(field)>;
        takes_string = std::is_same_v<T, std::string> || std::is_enum_v<T>;
        takes_list = std::is_same_v<T, std::vector<std::string>>;
      },
      probe);
  if (takes_list && !parsed) {
    auto list = std::make_unique<toml::array>();
    std::size_t start = 0;
    while (start <= value.size()) {
      const auto comma = std::min(value.find(',', start), value.size());
      list->push_back(std::string(value.substr(start, comma - start)));
      start = comma + 1;
    }
    return list;
  }
  if (!parsed || (takes_string && !parsed->is_string())) {
    return std::make_unique<toml::value<std::string>>(std::string(value));
  }
  return parsed;
}

void apply_overrides(Document& doc, std::span<const std::string> overrides, std::vector<ConfigError>& errors) {
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const std::string& text = overrides[i];
    const auto line = static_cast<std::int64_t>(i + 1);
    const Location key_at{kOverrideSource, line, 1};
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
      errors.push_back({key_at, "expected section.key=value, got '" + text + "'"});
      continue;
    }
    const std::string_view key = std::string_view(text).substr(0, eq);
    const std::string_view value = std::string_view(text).substr(eq + 1);
    // The longest known section the key starts with ("upstream.sasl.mechanism"
    // is in [upstream.sasl]); else the part before the first dot.
    auto dot = key.find('.');
    for (const auto s : all_sections()) {
      if (s.size() > dot && s.size() < key.size() && key.starts_with(s) && key[s.size()] == '.') dot = s.size();
    }
    const std::string_view section = dot == std::string_view::npos ? "" : key.substr(0, dot);
    const std::string_view name = dot == std::string_view::npos ? key : key.substr(dot + 1);
    const KeySpec* spec = find_key(section, name);
    if (spec == nullptr) {
      const auto hint = suggest_key(section, name);
      errors.push_back(
          {key_at, "unknown key '" + std::string(key) + "'" + (hint ? "; did you mean '" + *hint + "'?" : "")});
      continue;
    }
    const Location value_at{kOverrideSource, line, static_cast<std::int64_t>(eq + 2)};
    const auto node = override_value(*spec, value);
    // A section that is not a table is reported from the file; nothing to merge into.
    toml::table* section_table = section_table_for_update(doc.root, spec->section);
    if (section_table == nullptr) continue;
    toml::table& table = *section_table;
    std::move(*node).visit([&](auto&& n) { table.insert_or_assign(spec->name, std::forward<decltype(n)>(n)); });
    doc.overridden.insert_or_assign(spec->full_name(), value_at);
  }
}

// File errors first, in line order, then the --set ones in option order.
void sort_errors(std::vector<ConfigError>& errors) {
  std::stable_sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
    const bool a_set = a.where.source == kOverrideSource;
    const bool b_set = b.where.source == kOverrideSource;
    if (a_set != b_set) return !a_set;
    if (a.where.line != b.where.line) return a.where.line < b.where.line;
    return a.where.column < b.where.column;
  });
}

LoadResult finish(Document& doc, std::span<const std::string> overrides, std::vector<ConfigError> errors) {
  apply_overrides(doc, overrides, errors);
  Settings settings = read_settings(doc, errors);
  if (!errors.empty()) {
    sort_errors(errors);
    return std::unexpected(std::move(errors));
  }
  return settings;
}

// The file itself failed (unreadable, or not TOML): nothing in it can be
// checked, but the --set options still can, so they are reported too.
LoadResult fail_with(ConfigError file_error, std::span<const std::string> overrides) {
  std::vector<ConfigError> errors{std::move(file_error)};
  Document empty;
  apply_overrides(empty, overrides, errors);
  sort_errors(errors);
  return std::unexpected(std::move(errors));
}

LoadResult parse_into(Document& doc, std::string_view text, std::span<const std::string> overrides) {
  try {
    doc.root = toml::parse(text, doc.file_name);
  } catch (const toml::parse_error& e) {
    return fail_with({parse_error_location(e, doc.file_name), "TOML syntax error: " + std::string(e.description())},
                     overrides);
  }
  return finish(doc, overrides, {});
}

}  // namespace

std::string resolve_config_path(const std::optional<std::string>& cli_path) {
  if (cli_path) return *cli_path;
  const char* env = std::getenv(std::string(kConfigPathEnv).c_str());
  if (env != nullptr && *env != '\0') return env;
  return std::string(kDefaultConfigPath);
}

LoadResult load_settings(const ConfigSource& source) {
  Document doc;
  doc.file_name = resolve_config_path(source.path);
  const FileText file = read_file(doc.file_name);
  if (file.error != 0) {
    const bool named = source.path.has_value() || doc.file_name != kDefaultConfigPath;
    if (file.error == ENOENT && !named) {
      doc.file_missing = true;
      return finish(doc, source.overrides, {});
    }
    const std::string reason = std::strerror(file.error);
    return fail_with({Location{doc.file_name, 1, 1}, "cannot read the config file: " + reason}, source.overrides);
  }
  return parse_into(doc, file.text, source.overrides);
}

LoadResult parse_settings(std::string_view toml_text, std::string_view file_name,
                          std::span<const std::string> overrides) {
  Document doc;
  doc.file_name = std::string(file_name);
  return parse_into(doc, toml_text, overrides);
}

}  // namespace pp::config
