// The command line of docs/design/INTERFACES.md:
//   produce-proxy [--config FILE] [--set KEY=VALUE ...] [--log-level LEVEL]
//   produce-proxy --check-config [--config FILE] [--set KEY=VALUE ...]
//   produce-proxy --print-config [--config FILE] [--set KEY=VALUE ...]
//   produce-proxy --version
//   produce-proxy users add NAME --mechanism M [--mechanism M ...] --users-file FILE
//   produce-proxy spool inspect DIR
// Parsing only; main() decides what to run. Use:
//   const auto cli = pp::parse_command_line({argv, argv + argc}, pp::version_report(PP_VERSION));
//   if (!cli) { (cli.error().exit_code == 0 ? std::cout : std::cerr) << cli.error().output;
//               return cli.error().exit_code; }              // --help, --version, usage error
//   if (cli->check_config) return pp::check_config(*cli, std::cout, std::cerr);
//   if (cli->print_config) return pp::print_config(*cli, std::cout, std::cerr);
//   auto settings = pp::config::load_settings(cli->config_source());  // errors: print, exit 2
//   ... keep cli->config_source() to re-load on SIGHUP.
#pragma once

#include <expected>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.h"
#include "config/settings.h"
#include "daemon/users_command.h"

namespace pp {

// Exit codes (docs/design/INTERFACES.md, "Command line"; --help prints them): 0 clean
// stop (drained), or --help, --version, a valid --check-config or
// --print-config; 1 runtime failure (start-up failed, a fatal producer,
// records lost to the drain deadline); 2 bad config or usage.
inline constexpr int kExitClean = 0;
inline constexpr int kExitRuntimeFailure = 1;
inline constexpr int kExitBadConfig = 2;

struct CommandLine {
  std::optional<std::string> config_path;     // --config
  std::vector<std::string> overrides;         // --set, in the order given
  std::optional<config::LogLevel> log_level;  // --log-level
  bool check_config = false;                  // --check-config
  bool print_config = false;                  // --print-config
  std::optional<UsersAddCommand> users_add;   // users add (users_command.h)
  std::optional<std::string> spool_inspect;   // spool inspect DIR

  // What load_settings() needs, on start and again on every SIGHUP. A
  // --log-level becomes the last override, so it beats the file and --set.
  config::ConfigSource config_source() const;
};

// The program should exit without running: help or version (exit_code 0,
// output for stdout) or a usage error (exit_code 2, output for stderr).
struct CliExit {
  int exit_code = kExitClean;
  std::string output;
};

// args is argv (args[0] the program name). --version prints "produce-proxy "
// followed by `version` and a newline.
std::expected<CommandLine, CliExit> parse_command_line(std::span<const char* const> args, std::string_view version);

// What --version reports after the program name, one item per line, no
// trailing newline: `version`, the git revision the build tree was configured
// from ("unknown" outside git), and the versions of librdkafka, OpenSSL and
// libuv this process runs with (their runtime version calls, not the headers
// built against).
std::string version_report(std::string_view version);

// --check-config: loads and validates; prints "FILE: ok" to `out` and returns
// 0, or every problem as FILE:LINE:COLUMN: message to `err` and returns 2.
int check_config(const CommandLine& cli, std::ostream& out, std::ostream& err);

// --print-config: loads and validates like check_config; prints the effective
// configuration as TOML (config/print_settings.h: every key, defaults
// included, secrets redacted) to `out` and returns 0, or the problems to
// `err` and returns 2.
int print_config(const CommandLine& cli, std::ostream& out, std::ostream& err);

}  // namespace pp
