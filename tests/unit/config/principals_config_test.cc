// [[listener.principals]]: read in file order, each problem at its value,
// a change reported as needing a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/diff.h"
#include "config/load.h"
#include "config/print_settings.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;

TEST(PrincipalsConfig, ReadsEveryEntryInOrder) {
  const auto s = parse_settings(std::string(kMinimal) + R"(
[[listener.principals]]
name = "alice"
topics = ["orders", "logs-*"]
produce_bytes_per_second = 1048576

[[listener.principals]]
name = "ANONYMOUS"
topics = []
idempotent_write = false
)",
                                "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  ASSERT_EQ(s->listener.principals.size(), 2U);
  const auto& alice = s->listener.principals[0];
  EXPECT_EQ(alice.name, "alice");
  EXPECT_THAT(alice.topics, ElementsAre("orders", "logs-*"));
  EXPECT_TRUE(alice.idempotent_write);
  EXPECT_EQ(alice.produce_bytes_per_second, 1048576);
  EXPECT_EQ(s->listener.principals[1].name, "ANONYMOUS");
  EXPECT_FALSE(s->listener.principals[1].idempotent_write);
  EXPECT_EQ(s->listener.principals[1].produce_bytes_per_second, 0);
}

TEST(PrincipalsConfig, NoneByDefault) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->listener.principals.empty());
}

TEST(PrincipalsConfig, EachProblemAtItsValue) {
  const auto s = parse_settings(std::string(kMinimal) + R"(
[[listener.principals]]
name = "alice"
topics = ["ok", "a*b", "sp ace", ""]
produce_bytes_per_second = -1
colour = 1
[[listener.principals]]
topics = ["x"]
[[listener.principals]]
name = "bob"
[[listener.principals]]
name = "bob"
)",
                                "pp.toml");
  ASSERT_FALSE(s);
  EXPECT_THAT(error_lines(s),
              ElementsAre("pp.toml:6:17: listener.principals[0].topics[1] = \"a*b\" is not valid: '*' may only end "
                          "a prefix (\"logs-*\")",
                          "pp.toml:6:24: listener.principals[0].topics[2] = \"sp ace\" is not valid: a topic name has "
                          "only ASCII letters, digits, '.', '_' and '-'",
                          "pp.toml:6:34: listener.principals[0].topics[3] = \"\" is not valid: empty",
                          "pp.toml:7:28: listener.principals[0].produce_bytes_per_second = -1 is out of range [0, "
                          "1099511627776]",
                          "pp.toml:8:10: unknown key 'listener.principals[0].colour'",
                          "pp.toml:9:1: listener.principals[1].name is missing",
                          "pp.toml:13:1: listener.principals[3].name = \"bob\" is named by an earlier entry too"));
}

TEST(PrincipalsConfig, NotAnArrayOfTables) {
  const auto s = parse_settings(std::string(kMinimal) + "[listener]\nprincipals = \"alice\"\n", "pp.toml");
  ASSERT_FALSE(s);
  EXPECT_THAT(error_lines(s), ElementsAre("pp.toml:4:14: listener.principals must be an array of tables "
                                          "([[listener.principals]])"));
}

TEST(PrincipalsConfig, PrintedAndReadBack) {
  Settings s;
  s.upstream.bootstrap_servers = {"kafka-1:9092"};
  s.listener.principals.push_back({"alice", {"orders", "logs-*"}, false, 1000});
  s.listener.principals.push_back({"ANONYMOUS", {}, true, 0});
  const auto back = parse_settings(print_settings(s), "printed.toml");
  ASSERT_TRUE(back) << format_errors(back.error());
  EXPECT_EQ(back->listener.principals, s.listener.principals);
}

TEST(PrincipalsConfig, AChangeNeedsARestart) {
  Settings before;
  Settings after;
  after.listener.principals.push_back({"alice", {"orders"}, true, 0});
  const auto changes = diff_settings(before, after);
  ASSERT_EQ(changes.size(), 1U);
  EXPECT_EQ(changes[0].key, "listener.principals");
  EXPECT_FALSE(changes[0].live);
  EXPECT_TRUE(needs_restart(changes));
}

}  // namespace
}  // namespace pp::config::test
