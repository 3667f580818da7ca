// Loading: which file is read, what --set does, and what a valid file yields.
#include "config/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "config/schema.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Sets PRODUCE_PROXY_CONFIG for one test and restores it after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv("PRODUCE_PROXY_CONFIG")) old_ = old;
    if (value) {
      ::setenv("PRODUCE_PROXY_CONFIG", value, 1);
    } else {
      ::unsetenv("PRODUCE_PROXY_CONFIG");
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv("PRODUCE_PROXY_CONFIG", old_->c_str(), 1);
    } else {
      ::unsetenv("PRODUCE_PROXY_CONFIG");
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::optional<std::string> old_;
};

TEST(ConfigPath, FlagThenEnvironmentThenDefault) {
  {
    ScopedEnv env("/from/env.toml");
    EXPECT_EQ(resolve_config_path(std::string("/from/flag.toml")), "/from/flag.toml");
    EXPECT_EQ(resolve_config_path(std::nullopt), "/from/env.toml");
  }
  {
    ScopedEnv env("");
    EXPECT_EQ(resolve_config_path(std::nullopt), "/etc/produce-proxy/produce-proxy.toml");
  }
  ScopedEnv env(nullptr);
  EXPECT_EQ(resolve_config_path(std::nullopt), "/etc/produce-proxy/produce-proxy.toml");
}

TEST(LoadSettings, ReadsTheFileNamedByTheEnvironment) {
  TempDir dir;
  const std::string path = dir.write("pp.toml", std::string(kMinimal) + "[producer]\nlinger_ms = 12\n");
  ScopedEnv env(path.c_str());
  const auto s = load_settings({});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->producer.linger_ms, 12);
}

TEST(LoadSettings, MinimalFileGivesTheDefaults) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  Settings expected;
  expected.upstream.bootstrap_servers = {"kafka-1:9092"};
  EXPECT_EQ(*s, expected);
  EXPECT_FALSE(s->upstream.embedded());
}

TEST(LoadSettings, EveryKeyTypeIsRead) {
  const auto s = parse_settings(
      "[listener]\naddress = \"[::1]:0\"\nadvertised_address = \"proxy.local:19092\"\n"
      "[upstream]\nbootstrap_servers = [\"a:1\", \"b:2\"]\nclient_id = \"me\"\n"
      "[producer]\ncompression = \"zstd\"\nmax_partition_window = 5\n"
      "[metrics]\npartition_labels = false\n"
      "[log]\nlevel = \"debug\"\nformat = \"json\"\n",
      "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->listener.address, "[::1]:0");
  EXPECT_EQ(s->listener.advertised_address, "proxy.local:19092");
  EXPECT_EQ(s->upstream.bootstrap_servers, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(s->upstream.client_id, "me");
  EXPECT_EQ(s->producer.compression, Compression::kZstd);
  EXPECT_EQ(s->producer.max_partition_window, 5);
  EXPECT_FALSE(s->metrics.partition_labels);
  EXPECT_EQ(s->log.level, LogLevel::kDebug);
  EXPECT_EQ(s->log.format, LogFormat::kJson);
}

TEST(LoadSettings, EmbeddedUpstream) {
  const auto s = parse_settings("[upstream]\nbootstrap_servers = [\"embedded\"]\n", "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->upstream.embedded());
}

TEST(Overrides, TomlValuesBareStringsAndCommaLists) {
  const std::vector<std::string> overrides = {
      "producer.linger_ms=10",
      "upstream.bootstrap_servers=[\"a:1\",\"b:2\"]",
      "listener.address=0.0.0.0:19092",
      "listener.allow_unauthenticated=true",  // beyond loopback: no open relay without it
      "upstream.client_id=\"quoted\"",
      "producer.compression=lz4",
      "metrics.partition_labels=false",
      "log.level=warn",
  };
  const auto s = parse_settings(kMinimal, "pp.toml", overrides);
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->producer.linger_ms, 10);
  EXPECT_EQ(s->upstream.bootstrap_servers, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(s->listener.address, "0.0.0.0:19092");
  EXPECT_TRUE(s->listener.allow_unauthenticated);
  EXPECT_EQ(s->upstream.client_id, "quoted");
  EXPECT_EQ(s->producer.compression, Compression::kLz4);
  EXPECT_FALSE(s->metrics.partition_labels);
  EXPECT_EQ(s->log.level, LogLevel::kWarn);

  const auto bare =
      parse_settings("", "pp.toml", std::vector<std::string>{"upstream.bootstrap_servers=k1:9092,k2:9092"});
  ASSERT_TRUE(bare) << format_errors(bare.error());
  EXPECT_EQ(bare->upstream.bootstrap_servers, (std::vector<std::string>{"k1:9092", "k2:9092"}));
  // A number is taken as text for a string key.
  const auto number = parse_settings(kMinimal, "pp.toml", std::vector<std::string>{"upstream.client_id=42"});
  ASSERT_TRUE(number);
  EXPECT_EQ(number->upstream.client_id, "42");
}

TEST(Overrides, LaterWinsAndOverridesBeatTheFile) {
  const auto s = parse_settings(std::string(kMinimal) + "[producer]\nlinger_ms = 1\n", "pp.toml",
                                std::vector<std::string>{"producer.linger_ms=2", "producer.linger_ms=3"});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->producer.linger_ms, 3);
}

TEST(Overrides, OneValueOnly) {
  // A newline cannot smuggle a second key in: the whole text is then a string.
  EXPECT_THAT(error_lines(parse_settings(kMinimal, "pp.toml",
                                         std::vector<std::string>{"producer.linger_ms=1\nlog.level=\"x\""})),
              ElementsAre("--set:1:20: producer.linger_ms must be an integer, not a string"));
}

TEST(Overrides, ValueErrorsPointAtTheOverride) {
  EXPECT_THAT(error_lines(parse_settings(std::string(kMinimal) + "[producer]\nlinger_ms = 1\n", "pp.toml",
                                         std::vector<std::string>{"log.level=info", "producer.linger_ms=-5"})),
              ElementsAre("--set:2:20: producer.linger_ms = -5 is out of range [0, 600000]"));
}

TEST(LoadSettings, MissingDefaultFileMeansDefaultsAndOverrides) {
  if (std::filesystem::exists(std::string(kDefaultConfigPath))) {
    GTEST_SKIP() << kDefaultConfigPath << " exists on this machine";
  }
  ScopedEnv env(nullptr);
  const auto s = load_settings({std::nullopt, {"upstream.bootstrap_servers=[\"embedded\"]"}});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->upstream.embedded());
  EXPECT_THAT(error_lines(load_settings({})),
              ElementsAre("/etc/produce-proxy/produce-proxy.toml:1:1: upstream.bootstrap_servers "
                          "is required: the Kafka cluster's [\"host:port\", ...], or [\"embedded\"] "
                          "for the in-process demo cluster (there is no config file at "
                          "/etc/produce-proxy/produce-proxy.toml; name one with --config or "
                          "PRODUCE_PROXY_CONFIG, or use --set)"));
}

TEST(Schema, KeysAreUniqueAndFindable) {
  const auto keys = all_keys();
  EXPECT_EQ(keys.size(), 65u);  // docs/design/INTERFACES.md's config block
  for (const auto& k : keys) {
    const KeySpec* found = find_key(k.section, k.name);
    ASSERT_NE(found, nullptr) << k.full_name();
    EXPECT_EQ(found->full_name(), k.full_name());
  }
  EXPECT_THAT(all_sections(), ElementsAre("listener", "listener.tls", "listener.sasl", "upstream", "upstream.tls",
                                          "upstream.sasl", "producer", "metrics", "log", "shutdown", "spool"));
  EXPECT_EQ(find_key("producer", "nope"), nullptr);
}

TEST(Schema, EveryDefaultIsValidItself) {
  // Defaults plus the one required key load with no error, and every integer
  // default lies inside its own range.
  EXPECT_THAT(error_lines(parse_settings(kMinimal, "pp.toml")), IsEmpty());
  const Settings defaults;
  visit_keys(
      [](const KeySpec& spec, const auto& field) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, std::int64_t>) {
          EXPECT_GE(field, spec.min) << spec.full_name();
          EXPECT_LE(field, spec.max) << spec.full_name();
        }
      },
      defaults);
}

}  // namespace
}  // namespace pp::config::test
