// Each kind of bad config gives the documented FILE:LINE:COLUMN: message, and
// a config with several problems reports all of them in one go.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/load.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> errors_of(const std::string& toml, std::vector<std::string> overrides = {}) {
  return error_lines(parse_settings(toml, "pp.toml", overrides));
}

TEST(BadConfig, UnknownKeySuggestsTheNearestKnownKey) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nlingr_ms = 10\n"),
              ElementsAre("pp.toml:4:1: unknown key 'producer.lingr_ms'; did you mean "
                          "'producer.linger_ms'?"));
}

TEST(BadConfig, KeyInTheWrongSectionSuggestsItsSection) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "linger_ms = 10\n"),
              ElementsAre("pp.toml:3:1: unknown key 'upstream.linger_ms'; did you mean "
                          "'producer.linger_ms'?"));
  EXPECT_THAT(errors_of(std::string("compression = \"zstd\"\n") + kMinimal),
              ElementsAre("pp.toml:1:1: unknown key 'compression'; did you mean "
                          "'producer.compression'?"));
}

TEST(BadConfig, UnknownSectionSuggestsTheNearestSection) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "\n[prodcer]\nlinger_ms = 1\n"),
              ElementsAre("pp.toml:4:1: unknown section [prodcer]; did you mean [producer]?"));
}

TEST(BadConfig, KafkaPropertyNamesSuggestOurs) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nbatch.size = 16384\n"),
              ElementsAre("pp.toml:4:1: unknown key 'producer.batch.size'; did you mean "
                          "'producer.batch_bytes'?"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\ncompression_type = \"lz4\"\n"),
              ElementsAre("pp.toml:4:1: unknown key 'producer.compression_type'; did you mean "
                          "'producer.compression'?"));
}

TEST(BadConfig, UnknownKeyFarFromAnyGetsNoSuggestion) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nenable_idempotence = false\n"),
              ElementsAre("pp.toml:4:1: unknown key 'producer.enable_idempotence'"));
}

TEST(BadConfig, WrongTypes) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nlinger_ms = \"10\"\n"),
              ElementsAre("pp.toml:4:13: producer.linger_ms must be an integer, not a string"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nlinger_ms = 2.5\n"),
              ElementsAre("pp.toml:4:13: producer.linger_ms must be an integer, not a float"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[metrics]\npartition_labels = \"yes\"\n"),
              ElementsAre("pp.toml:4:20: metrics.partition_labels must be true or false, not a "
                          "string"));
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = \"kafka-1:9092\"\n"),
              ElementsAre("pp.toml:2:21: upstream.bootstrap_servers must be an array of strings, "
                          "not a string"));
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"a:1\", 9092]\n"),
              ElementsAre("pp.toml:2:29: upstream.bootstrap_servers[1] must be a string, not an "
                          "integer"));
  EXPECT_THAT(errors_of("producer = 5\n" + std::string(kMinimal)),
              ElementsAre("pp.toml:1:1: [producer] must be a table, not an integer"));
}

TEST(BadConfig, WindowCapBelowFive) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nmax_partition_window = 4\n"),
              ElementsAre("pp.toml:4:24: producer.max_partition_window = 4 is below 5, the "
                          "initial window every partition starts at (and falls back to on a "
                          "leader change); the cap cannot be lower"));
}

TEST(BadConfig, OutOfRange) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nlinger_ms = -1\n"),
              ElementsAre("pp.toml:4:13: producer.linger_ms = -1 is out of range [0, 600000]"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[listener]\nmax_connections = 0\n"),
              ElementsAre("pp.toml:4:19: listener.max_connections = 0 is out of range [1, 1000000]"));
}

TEST(BadConfig, EnumsNameTheirChoices) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\ncompression = \"brotli\"\n"),
              ElementsAre("pp.toml:4:15: producer.compression = \"brotli\" is not one of none | "
                          "gzip | snappy | lz4 | zstd"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[log]\nlevel = \"INFO\"\n"),
              ElementsAre("pp.toml:4:9: log.level = \"INFO\" is not one of trace | debug | info | "
                          "warn | error; did you mean \"info\"?"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[log]\nformat = \"jsn\"\n"),
              ElementsAre("pp.toml:4:10: log.format = \"jsn\" is not one of text | json; did you "
                          "mean \"json\"?"));
}

TEST(BadConfig, AddressesMustBeHostPort) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[listener]\naddress = \"localhost\"\n"),
              ElementsAre("pp.toml:4:11: listener.address = \"localhost\" is not valid: expected "
                          "host:port"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[metrics]\naddress = \"::1:9464\"\n"),
              ElementsAre("pp.toml:4:11: metrics.address = \"::1:9464\" is not valid: write an "
                          "IPv6 address as [addr]:port"));
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"k:9092\", \"k:0\", \"k:99999\"]\n"),
              ElementsAre("pp.toml:2:32: upstream.bootstrap_servers[1] = \"k:0\" is not valid: "
                          "port 0 is not a port a broker listens on",
                          "pp.toml:2:39: upstream.bootstrap_servers[2] = \"k:99999\" is not "
                          "valid: the port is not a number in 0-65535"));
}

TEST(BadConfig, BootstrapServersRequiredNonEmptyAndEmbeddedAlone) {
  EXPECT_THAT(errors_of("[upstream]\nclient_id = \"x\"\n"),
              ElementsAre("pp.toml:1:1: upstream.bootstrap_servers is required: the Kafka "
                          "cluster's [\"host:port\", ...], or [\"embedded\"] for the in-process "
                          "demo cluster"));
  EXPECT_THAT(errors_of("[log]\nlevel = \"info\"\n"),
              ElementsAre("pp.toml:1:1: upstream.bootstrap_servers is required: the Kafka "
                          "cluster's [\"host:port\", ...], or [\"embedded\"] for the in-process "
                          "demo cluster"));
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = []\n"),
              ElementsAre("pp.toml:2:21: upstream.bootstrap_servers is empty: list at least one "
                          "\"host:port\", or [\"embedded\"] for the in-process demo cluster"));
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"embedded\", \"k:1\"]\n"),
              ElementsAre("pp.toml:2:21: \"embedded\" must be the only entry of "
                          "upstream.bootstrap_servers: the in-process cluster replaces the real "
                          "one"));
}

TEST(BadConfig, ImpossibleCombinations) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\ndelivery_timeout_ms = 20000\n"),
              ElementsAre("pp.toml:4:23: producer.delivery_timeout_ms (20000) must be at least "
                          "producer.linger_ms + upstream.request_timeout_ms (5 + 30000)"));
  // Reported at the key the user did set, not at the default they left alone.
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"k:1\"]\nrequest_timeout_ms = 200000\n"),
              ElementsAre("pp.toml:3:22: producer.delivery_timeout_ms (120000) must be at least "
                          "producer.linger_ms + upstream.request_timeout_ms (5 + 200000)"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nbuffer_memory_bytes = 1024\n"),
              ElementsAre("pp.toml:4:23: producer.buffer_memory_bytes (1024) must be at least "
                          "producer.batch_bytes (1048576)",
                          "pp.toml:4:23: listener.max_request_bytes (16777216) must be at most "
                          "producer.buffer_memory_bytes (1024)"));
  // A frame is charged from its size prefix: one larger than the budget could
  // hold every other client up while it arrives.
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[listener]\nmax_request_bytes = 104857600\n"),
              ElementsAre("pp.toml:4:21: listener.max_request_bytes (104857600) must be at most "
                          "producer.buffer_memory_bytes (67108864)"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nretry_backoff_max_ms = 50\n"),
              ElementsAre("pp.toml:4:24: producer.retry_backoff_max_ms (50) must be at least "
                          "producer.retry_backoff_ms (100)"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[metrics]\naddress = \"127.0.0.1:9092\"\n"),
              ElementsAre("pp.toml:4:11: metrics.address is the same as listener.address "
                          "(127.0.0.1:9092); they are two listeners and need two ports"));
}

TEST(BadConfig, AKeyThatFailedItsOwnCheckDoesNotCascade) {
  // linger_ms is wrong; the delivery rule, which involves it, stays quiet.
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[producer]\nlinger_ms = \"x\"\ndelivery_timeout_ms = 10\n"),
              ElementsAre("pp.toml:4:13: producer.linger_ms must be an integer, not a string"));
}

TEST(BadConfig, SyntaxErrorIsReportedWithItsPosition) {
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"k:1\"\n"),
              ElementsAre("pp.toml:2:28: TOML syntax error: Error while parsing array: "
                          "encountered end-of-file"));
  EXPECT_THAT(errors_of("[upstream\n"), ElementsAre(::testing::StartsWith("pp.toml:1:")));
}

TEST(BadConfig, SeveralProblemsAtOnceInFileOrderThenSetOrder) {
  const std::string toml =
      "[upstream]\n"                              // 1
      "bootstrap_servers = [\"kafka-1:9092\"]\n"  // 2
      "[producer]\n"                              // 3
      "max_partition_window = 3\n"                // 4
      "linger_ms = \"5\"\n"                       // 5
      "compresion = \"lz4\"\n"                    // 6
      "[log]\n"                                   // 7
      "level = \"verbose\"\n";                    // 8
  EXPECT_THAT(errors_of(toml, {"producer.batch_bytes=0", "metrics.adress=0.0.0.0:9464"}),
              ElementsAre(::testing::StartsWith("pp.toml:4:24: producer.max_partition_window = 3 is below 5"),
                          "pp.toml:5:13: producer.linger_ms must be an integer, not a string",
                          "pp.toml:6:1: unknown key 'producer.compresion'; did you mean 'producer.compression'?",
                          "pp.toml:8:9: log.level = \"verbose\" is not one of trace | debug | info | warn | error",
                          "--set:1:22: producer.batch_bytes = 0 is out of range [1, 16777216]",
                          "--set:2:1: unknown key 'metrics.adress'; did you mean 'metrics.address'?"));
}

TEST(BadConfig, BadOverrides) {
  EXPECT_THAT(errors_of(kMinimal, {"producer.linger_ms"}),
              ElementsAre("--set:1:1: expected section.key=value, got 'producer.linger_ms'"));
  EXPECT_THAT(errors_of(kMinimal, {"producer.linger_ms=10ms"}),
              ElementsAre("--set:1:20: producer.linger_ms must be an integer, not a string"));
  EXPECT_THAT(errors_of(kMinimal, {"lingerms=1"}),
              ElementsAre("--set:1:1: unknown key 'lingerms'; did you mean 'producer.linger_ms'?"));
}

TEST(BadConfig, UnreadableFile) {
  TempDir dir;
  const std::string missing = dir.path("nope.toml");
  EXPECT_THAT(error_lines(load_settings({missing, {}})),
              ElementsAre(missing + ":1:1: cannot read the config file: No such file or directory"));
  EXPECT_THAT(error_lines(load_settings({dir.path(""), {}})),
              ElementsAre(dir.path("") + ":1:1: cannot read the config file: Is a directory"));
  if (::geteuid() != 0) {  // root reads a mode-000 file anyway
    const std::string locked = dir.write("locked.toml", kMinimal);
    ASSERT_EQ(::chmod(locked.c_str(), 0), 0);
    EXPECT_THAT(error_lines(load_settings({locked, {}})),
                ElementsAre(locked + ":1:1: cannot read the config file: Permission denied"));
  }
  // The --set options are still checked, so one run shows everything.
  EXPECT_THAT(error_lines(load_settings({missing, {"producer.lingr_ms=1"}})),
              ElementsAre(missing + ":1:1: cannot read the config file: No such file or directory",
                          "--set:1:1: unknown key 'producer.lingr_ms'; did you mean "
                          "'producer.linger_ms'?"));
}

}  // namespace
}  // namespace pp::config::test
