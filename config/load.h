// Loading the configuration: the file, then the --set overrides on top, then
// validation of the whole result. Every problem is collected and returned at
// once (never thrown), each as FILE:LINE:COLUMN: message, so an operator fixes
// a config in one round instead of one error per restart.
//
// Typical use by the daemon:
//   const auto settings = config::load_settings({cli.config_path, cli.settings_overrides()});
//   if (!settings) { std::cerr << config::format_errors(settings.error()); return 2; }
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/settings.h"

namespace pp::config {

struct ConfigSource {
  // --config; when absent, $PRODUCE_PROXY_CONFIG, else kDefaultConfigPath.
  std::optional<std::string> path;
  // "section.key=value" each, applied in order (a later one wins). The value
  // is TOML (10, true, "x", ["a:1", "b:2"]); for string keys a bare word is
  // taken as the string, and for bootstrap_servers a bare comma-separated
  // list as the list, so `--set upstream.bootstrap_servers=kafka:9092` works.
  std::vector<std::string> overrides;
};

using LoadResult = std::expected<Settings, std::vector<ConfigError>>;

// The file the daemon reads: --config, else $PRODUCE_PROXY_CONFIG (when set
// and non-empty), else /etc/produce-proxy/produce-proxy.toml.
std::string resolve_config_path(const std::optional<std::string>& cli_path);

// Reads resolve_config_path(source.path), applies the overrides, validates.
// A file named by --config or the environment must be readable; a missing
// file at the default path is allowed (all keys then come from defaults and
// --set), so a container can be configured by --set alone.
LoadResult load_settings(const ConfigSource& source);

// The same on TOML text already in memory; `file_name` is what locations name.
LoadResult parse_settings(std::string_view toml_text, std::string_view file_name,
                          std::span<const std::string> overrides = {});

}  // namespace pp::config
