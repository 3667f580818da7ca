// daemon/cli: the command line of docs/design/INTERFACES.md, and --check-config's exit
// codes and output (bad configs exit 2 with FILE:LINE:COLUMN: messages).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "daemon/cli.h"
#include "tests/unit/config/config_test_support.h"

namespace pp {
namespace {

using ::testing::HasSubstr;

std::expected<CommandLine, CliExit> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "produce-proxy");
  return parse_command_line(args, "1.2.3");
}

TEST(CommandLine, NoArgumentsRunsWithDefaults) {
  const auto cli = parse({});
  ASSERT_TRUE(cli);
  EXPECT_FALSE(cli->config_path);
  EXPECT_TRUE(cli->overrides.empty());
  EXPECT_FALSE(cli->log_level);
  EXPECT_FALSE(cli->check_config);
}

TEST(CommandLine, EveryOption) {
  const auto cli = parse({"--config", "/x/pp.toml", "--set", "producer.linger_ms=10", "--set",
                          "upstream.bootstrap_servers=[\"a:1\",\"b:2\"]", "--log-level", "debug"});
  ASSERT_TRUE(cli) << cli.error().output;
  EXPECT_EQ(cli->config_path, "/x/pp.toml");
  EXPECT_EQ(cli->overrides,
            (std::vector<std::string>{"producer.linger_ms=10", "upstream.bootstrap_servers=[\"a:1\",\"b:2\"]"}));
  EXPECT_EQ(cli->log_level, config::LogLevel::kDebug);
  // --log-level goes last, so it beats the file and any --set log.level.
  EXPECT_EQ(cli->config_source().overrides.back(), "log.level=debug");
  EXPECT_EQ(cli->config_source().path, "/x/pp.toml");
}

TEST(CommandLine, EqualsFormAndCheckConfig) {
  const auto cli = parse({"--check-config", "--config=/y.toml", "--set=log.level=warn"});
  ASSERT_TRUE(cli) << cli.error().output;
  EXPECT_TRUE(cli->check_config);
  EXPECT_EQ(cli->config_path, "/y.toml");
  EXPECT_EQ(cli->overrides, std::vector<std::string>{"log.level=warn"});
}

TEST(CommandLine, VersionAndHelpExitZero) {
  const auto version = parse({"--version"});
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().exit_code, 0);
  EXPECT_EQ(version.error().output, "produce-proxy 1.2.3\n");
  const auto help = parse({"--help"});
  ASSERT_FALSE(help);
  EXPECT_EQ(help.error().exit_code, 0);
  EXPECT_THAT(help.error().output, HasSubstr("--check-config"));
  EXPECT_THAT(help.error().output, HasSubstr("--set KEY=VALUE"));
}

TEST(CommandLine, UsageErrorsExitTwo) {
  for (const auto& args : std::vector<std::vector<const char*>>{
           {"--bogus"}, {"--log-level", "loud"}, {"--set"}, {"--set", "a.b=1", "stray"}, {"--config"}}) {
    const auto cli = parse(args);
    ASSERT_FALSE(cli) << args.front();
    EXPECT_EQ(cli.error().exit_code, 2) << args.front();
    EXPECT_THAT(cli.error().output, HasSubstr("produce-proxy: ")) << args.front();
  }
}

TEST(CheckConfig, ValidConfigExitsZero) {
  config::test::TempDir dir;
  const std::string path = dir.write("pp.toml", config::test::kMinimal);
  const auto cli = parse({"--check-config", "--config", path.c_str()});
  ASSERT_TRUE(cli);
  std::ostringstream out, err;
  EXPECT_EQ(check_config(*cli, out, err), 0);
  EXPECT_EQ(out.str(), path + ": ok\n");
  EXPECT_EQ(err.str(), "");
}

TEST(CheckConfig, EachBadConfigExitsTwoWithItsMessage) {
  config::test::TempDir dir;
  const std::string min = config::test::kMinimal;
  struct Case {
    std::string toml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {min + "[producer]\nlingr_ms = 1\n",
       ":4:1: unknown key 'producer.lingr_ms'; did you mean 'producer.linger_ms'?\n"},
      {min + "[producer]\nlinger_ms = \"1\"\n", ":4:13: producer.linger_ms must be an integer, not a string\n"},
      {min + "[producer]\nmax_partition_window = 2\n",
       ":4:24: producer.max_partition_window = 2 is below 5, the initial window every partition "
       "starts at (and falls back to on a leader change); the cap cannot be lower\n"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.write("bad.toml", c.toml);
    const auto cli = parse({"--check-config", "--config", path.c_str()});
    ASSERT_TRUE(cli);
    std::ostringstream out, err;
    EXPECT_EQ(check_config(*cli, out, err), 2);
    EXPECT_EQ(err.str(), path + c.message);
    EXPECT_EQ(out.str(), "");
  }
  const std::string missing = dir.path("missing.toml");
  const auto cli = parse({"--check-config", "--config", missing.c_str()});
  ASSERT_TRUE(cli);
  std::ostringstream out, err;
  EXPECT_EQ(check_config(*cli, out, err), 2);
  EXPECT_EQ(err.str(), missing + ":1:1: cannot read the config file: No such file or directory\n");
}

TEST(CheckConfig, LogLevelIsValidatedWithTheRest) {
  config::test::TempDir dir;
  const std::string path = dir.write("pp.toml", config::test::kMinimal);
  const auto cli = parse({"--check-config", "--config", path.c_str(), "--log-level", "trace"});
  ASSERT_TRUE(cli);
  const auto s = config::load_settings(cli->config_source());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->log.level, config::LogLevel::kTrace);
}

}  // namespace
}  // namespace pp
