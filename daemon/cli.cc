#include "daemon/cli.h"

#include <librdkafka/rdkafka.h>
#include <openssl/crypto.h>
#include <uv.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "config/print_settings.h"

#ifndef PP_GIT_REVISION
#define PP_GIT_REVISION "unknown"
#endif

namespace pp {

namespace {

constexpr const char* kExitCodes =
    "\nExit codes:\n"
    "  0  stopped cleanly, every accepted record delivered; --help, --version; --check-config,\n"
    "     --print-config: valid\n"
    "  1  runtime failure: start-up failed, the producer failed fatally, or records were lost to\n"
    "     shutdown.drain_timeout_ms\n"
    "  2  bad configuration or usage (--check-config, --print-config: invalid)\n";

// `spool inspect DIR`: sets cli.spool_inspect when given.
void add_spool_inspect(CLI::App& app, CommandLine& cli) {
  CLI::App* spool = app.add_subcommand("spool", "The durable local spool (docs/design/SPOOL.md)");
  spool->require_subcommand(1);
  CLI::App* inspect = spool->add_subcommand(
      "inspect",
      "Print a spool directory offline, read-only: segments, batches per partition, unresolved batches "
      "with their identity, the oldest record's age, corrupt ranges; exit 0, or 1 if it is refused");
  inspect
      ->add_option_function<std::string>(
          "DIR", [&cli](const std::string& dir) { cli.spool_inspect = dir; }, "The spool directory (spool.dir)")
      ->required();
}

}  // namespace

std::string version_report(std::string_view version) {
  return std::string(version) + "\nrevision " + PP_GIT_REVISION + "\nlibrdkafka " + rd_kafka_version_str() + "\n" +
         OpenSSL_version(OPENSSL_VERSION) + "\nlibuv " + uv_version_string();
}

config::ConfigSource CommandLine::config_source() const {
  config::ConfigSource source{config_path, overrides};
  if (log_level) source.overrides.push_back("log.level=" + std::string(config::to_string(*log_level)));
  return source;
}

std::expected<CommandLine, CliExit> parse_command_line(std::span<const char* const> args, std::string_view version) {
  CLI::App app{"Kafka produce sidecar: legacy clients in, idempotent batched produce out.", "produce-proxy"};
  CommandLine cli;
  std::string config_path;
  std::string log_level;
  bool show_version = false;

  add_spool_inspect(*app.footer(kExitCodes), cli);
  UsersAddCommand users_add;
  const CLI::App* users_add_parsed = add_users_command(app, users_add);
  app.add_option("--config", config_path,
                 "TOML config file [$PRODUCE_PROXY_CONFIG, else " + std::string(config::kDefaultConfigPath) + "]")
      ->type_name("FILE")
      ->group("Configuration");
  // One KEY=VALUE per --set, repeatable: a second bare word is a usage error,
  // not silently another override.
  app.add_option("--set", cli.overrides, "Override one key, e.g. --set producer.linger_ms=10")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false)
      ->group("Configuration");
  std::vector<std::string> levels;
  for (const auto name : config::enum_names<config::LogLevel>()) levels.emplace_back(name);
  app.add_option("--log-level", log_level, "Log level, over log.level of the config")
      ->type_name("LEVEL")
      ->check(CLI::IsMember(levels))
      ->group("Configuration");
  app.set_help_flag("-h,--help", "Print this help and exit")->group("Information");
  app.add_flag("--check-config", cli.check_config, "Validate the config, print every problem, exit 0 (valid) or 2")
      ->group("Information");
  app.add_flag("--print-config", cli.print_config,
               "Validate the config and print it as TOML with every default filled in and secrets redacted; "
               "exit 0 (valid) or 2")
      ->group("Information");
  app.add_flag("--version", show_version,
               "Print the version, the git revision and the versions of librdkafka, OpenSSL and libuv, and exit")
      ->group("Information");

  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp&) {
    return std::unexpected(CliExit{kExitClean, app.help()});
  } catch (const CLI::ParseError& e) {
    return std::unexpected(
        CliExit{kExitBadConfig, "produce-proxy: " + std::string(e.what()) + "\nRun with --help for the options.\n"});
  }
  if (cli.check_config && cli.print_config) {
    return std::unexpected(CliExit{
        kExitBadConfig,
        "produce-proxy: --check-config and --print-config exclude each other\nRun with --help for the options.\n"});
  }
  if (show_version) {
    return std::unexpected(CliExit{kExitClean, "produce-proxy " + std::string(version) + "\n"});
  }
  if (!config_path.empty() || app.count("--config") > 0) cli.config_path = config_path;
  if (!log_level.empty()) cli.log_level = config::parse_enum<config::LogLevel>(log_level);
  if (users_add_parsed->parsed()) cli.users_add = users_add;
  return cli;
}

int check_config(const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const config::ConfigSource source = cli.config_source();
  const auto settings = config::load_settings(source);
  if (!settings) {
    err << config::format_errors(settings.error());
    return kExitBadConfig;
  }
  out << config::resolve_config_path(source.path) << ": ok\n";
  return kExitClean;
}

int print_config(const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const config::ConfigSource source = cli.config_source();
  const auto settings = config::load_settings(source);
  if (!settings) {
    err << config::format_errors(settings.error());
    return kExitBadConfig;
  }
  out << "# produce-proxy --print-config: " << config::resolve_config_path(source.path) << " and "
      << source.overrides.size() << " override(s)\n"
      << config::print_settings(*settings);
  return kExitClean;
}

}  // namespace pp
