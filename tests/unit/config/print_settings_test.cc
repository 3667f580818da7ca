// config/print_settings: --print-config's TOML. It parses back into the
// Settings it was printed from (the example config, and configs that between
// them set every key away from its default), lists every schema key in
// schema order, marks defaults, and redacts what is_secret_key calls secret.
#include "config/print_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "config/load.h"
#include "config/schema.h"
#include "daemon/cli.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every key away from its default, SASL by SCRAM with a password file.
Settings everything_set(const TempDir& dir) {
  Settings s;
  auto& l = s.listener;
  l.address = "0.0.0.0:19092";
  l.allow_unauthenticated = true;
  l.advertised_address = "proxy.example:19092";
  l.max_connections = 77;
  l.max_connections_per_peer = 3;
  l.max_request_bytes = 2097152;
  l.idle_timeout_ms = 61000;
  l.frame_timeout_ms = 0;
  l.max_request_hold_ms = 12000;
  l.max_client_producers = 99;
  l.client_producer_idle_ms = 3600000;
  l.client_batches_to_retain = 7;
  l.message_timestamp_after_max_ms = -1;
  l.message_timestamp_before_max_ms = 86400000;
  l.sasl = {{"SCRAM-SHA-256", "PLAIN"}, dir.write("users.toml", ""), true, 3600000};
  l.tls = {true,
           dir.write("listener.crt", "c"),
           dir.write("listener.key", "k"),
           dir.write("clients-ca.crt", "ca"),
           ClientAuth::kRequired,
           2500};
  auto& u = s.upstream;
  u.bootstrap_servers = {"kafka-1.example:9092", "kafka-2.example:9093"};
  // Quotes, backslashes and control characters must survive the round trip.
  u.client_id = "orders \"proxy\"\\ \t\n\x01 ü";
  u.request_timeout_ms = 15000;
  u.metadata_max_age_ms = 60000;
  u.metadata_max_idle_ms = 120000;
  u.max_topics = 50;
  u.tls = {true, dir.write("ca.crt", "ca"), dir.write("client.crt", "c"), dir.write("client.key", "k"), "kafka.example",
           false};
  u.sasl.mechanism = "SCRAM-SHA-512";
  u.sasl.username = "proxy";
  u.sasl.password_file = dir.write("password", "hunter2\n");
  u.sasl.token_lifetime_ms = 60000;
  u.sasl.allow_plain_without_tls = true;
  auto& p = s.producer;
  p = {20, 65536, Compression::kZstd, 8, 50, 90000, 250, 5000, 8388608};
  s.metrics = {"0.0.0.0:19464", false};
  s.log = {LogLevel::kDebug, LogFormat::kJson};
  s.shutdown.drain_timeout_ms = 45000;
  s.spool = {dir.path("spool"),
             std::int64_t{3} << 30,
             1 << 24,
             SpoolAck::kSpool,
             {"audit=upstream", "logs-*=spool"},
             SpoolFsync::kAlways,
             7};
  return s;
}

// The SASL keys SCRAM with a file leaves at their defaults.
Settings with_password_env(const TempDir& dir) {
  Settings s = everything_set(dir);
  s.upstream.sasl.mechanism = "PLAIN";
  s.upstream.sasl.password_file.clear();
  s.upstream.sasl.password_env = "KAFKA_PASSWORD";
  return s;
}

Settings with_token_file(const TempDir& dir) {
  Settings s = everything_set(dir);
  s.upstream.sasl = {};
  s.upstream.sasl.mechanism = "OAUTHBEARER";
  s.upstream.sasl.token_file = dir.write("token", "eyJ.x.y");
  return s;
}

Settings with_token_command(const TempDir& dir) {
  Settings s = with_token_file(dir);
  s.upstream.sasl.token_file.clear();
  s.upstream.sasl.token_command = {"/usr/bin/fetch-token", "--audience", "kafka \"prod\""};
  return s;
}

void expect_round_trip(const Settings& s) {
  const std::string printed = print_settings(s);
  const auto loaded = parse_settings(printed, "printed.toml");
  ASSERT_TRUE(loaded) << format_errors(loaded.error()) << printed;
  EXPECT_EQ(*loaded, s) << printed;
}

TEST(PrintSettings, TheExampleConfigRoundTrips) {
  const auto example = load_settings({std::string(PP_SOURCE_DIR) + "/config/produce-proxy.example.toml", {}});
  ASSERT_TRUE(example) << format_errors(example.error());
  expect_round_trip(*example);
}

TEST(PrintSettings, EverySectionSetRoundTrips) {
  TempDir dir;
  for (const auto& s : {everything_set(dir), with_password_env(dir), with_token_file(dir), with_token_command(dir)}) {
    expect_round_trip(s);
  }
}

TEST(PrintSettings, TheRoundTripConfigsSetEveryKey) {
  // Otherwise a key the printer dropped would read back as its default and
  // the round trip would still pass.
  TempDir dir;
  std::set<std::string> set_keys;
  const Settings defaults;
  for (const auto& s : {everything_set(dir), with_password_env(dir), with_token_file(dir), with_token_command(dir)}) {
    visit_keys(
        [&](const KeySpec& spec, const auto& value, const auto& default_value) {
          if (!(value == default_value)) set_keys.insert(spec.full_name());
        },
        s, defaults);
  }
  for (const auto& spec : all_keys()) EXPECT_TRUE(set_keys.contains(spec.full_name())) << spec.full_name();
}

TEST(PrintSettings, EveryKeyInSchemaOrderDefaultsMarked) {
  Settings s;
  s.upstream.bootstrap_servers = {"kafka-1:9092"};
  const std::string printed = print_settings(s);
  std::size_t at = 0;
  std::string_view section;
  for (const auto& spec : all_keys()) {
    if (spec.section != section) {
      section = spec.section;
      at = printed.find("\n[" + std::string(section) + "]\n", at);
      ASSERT_NE(at, std::string::npos) << "section " << section << " missing or out of order:\n" << printed;
    }
    at = printed.find("\n" + std::string(spec.name) + " = ", at);
    ASSERT_NE(at, std::string::npos) << spec.full_name() << " missing or out of order:\n" << printed;
  }
  EXPECT_THAT(printed, HasSubstr("\nlinger_ms = 5  # default\n"));
  EXPECT_THAT(printed, HasSubstr("\nbootstrap_servers = [\"kafka-1:9092\"]\n"));
  EXPECT_THAT(printed, HasSubstr("# Redacted: none."));
}

TEST(PrintSettings, NoKeyOfTheSchemaHoldsASecret) {
  // Secrets live in the files and environment variables these keys name.
  for (const auto& spec : all_keys()) EXPECT_FALSE(is_secret_key(spec)) << spec.full_name();
  EXPECT_TRUE(is_secret_key(KeySpec{"upstream.sasl", "password"}));
  EXPECT_TRUE(is_secret_key(KeySpec{"upstream.sasl", "client_secret"}));
  EXPECT_TRUE(is_secret_key(KeySpec{"upstream.sasl", "token"}));
  EXPECT_TRUE(is_secret_key(KeySpec{"upstream.tls", "private_key"}));
}

TEST(PrintSettings, ASecretKeyIsRedactedAndNamed) {
  TempDir dir;
  const Settings s = everything_set(dir);
  const std::string printed =
      print_settings(s, [](const KeySpec& spec) { return spec.full_name() == "upstream.sasl.username"; });
  EXPECT_THAT(printed, HasSubstr("# Redacted (the value is a credential): upstream.sasl.username\n"));
  EXPECT_THAT(printed, HasSubstr("\nusername = \"(redacted)\"\n"));
  EXPECT_THAT(printed, Not(HasSubstr("\"proxy\"\n")));
  EXPECT_THAT(printed, Not(HasSubstr("# Redacted: none.")));
}

// daemon/cli: --print-config parses, excludes --check-config, and prints
// print_settings() of what load_settings() gave, or the errors with exit 2.
TEST(PrintConfigCommand, LoadsValidatesAndPrints) {
  TempDir dir;
  const std::string file = dir.write("pp.toml", std::string(kMinimal) + "[producer]\nlinger_ms = 20\n");
  const std::vector<const char*> args{"produce-proxy", "--print-config", "--config",
                                      file.c_str(),    "--set",          "log.level=warn"};
  const auto cli = parse_command_line(args, "1.2.3");
  ASSERT_TRUE(cli) << cli.error().output;
  EXPECT_TRUE(cli->print_config);
  EXPECT_FALSE(cli->check_config);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(print_config(*cli, out, err), kExitClean) << err.str();
  EXPECT_EQ(err.str(), "");
  const auto expected = load_settings(cli->config_source());
  ASSERT_TRUE(expected);
  EXPECT_EQ(out.str(), "# produce-proxy --print-config: " + file + " and 1 override(s)\n" + print_settings(*expected));
  EXPECT_THAT(out.str(), HasSubstr("\nlinger_ms = 20\n"));
  EXPECT_THAT(out.str(), HasSubstr("\nlevel = \"warn\"\n"));
}

TEST(PrintConfigCommand, InvalidExits2WithTheErrorsOnly) {
  TempDir dir;
  const std::string file = dir.write("pp.toml", std::string(kMinimal) + "[producer]\nlinger_ms = -1\n");
  const std::vector<const char*> args{"produce-proxy", "--print-config", "--config", file.c_str()};
  const auto cli = parse_command_line(args, "1.2.3");
  ASSERT_TRUE(cli);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(print_config(*cli, out, err), kExitBadConfig);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr(file + ":4:13: producer.linger_ms"));
}

TEST(PrintConfigCommand, NotTogetherWithCheckConfig) {
  const std::vector<const char*> args{"produce-proxy", "--print-config", "--check-config"};
  const auto cli = parse_command_line(args, "1.2.3");
  ASSERT_FALSE(cli);
  EXPECT_EQ(cli.error().exit_code, kExitBadConfig);
  EXPECT_THAT(cli.error().output, HasSubstr("--check-config and --print-config exclude each other"));
}

}  // namespace
}  // namespace pp::config::test
