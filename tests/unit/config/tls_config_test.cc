// [upstream.tls]: a nested section in files and --set, its checks, and which
// of its keys a SIGHUP applies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/diff.h"
#include "config/load.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(UpstreamTls, ReadFromItsOwnSection) {
  TempDir dir;
  const std::string ca = dir.write("ca.pem", "not parsed here");
  const auto s = parse_settings(std::string(kMinimal) + "[upstream.tls]\nenabled = true\nca_file = \"" + ca +
                                    "\"\nserver_name = \"kafka.example.net\"\nverify_hostname = false\n",
                                "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->upstream.tls.enabled);
  EXPECT_EQ(s->upstream.tls.ca_file, ca);
  EXPECT_EQ(s->upstream.tls.server_name, "kafka.example.net");
  EXPECT_FALSE(s->upstream.tls.verify_hostname);
  EXPECT_EQ(s->upstream.tls.cert_file, "");
}

TEST(UpstreamTls, DefaultsAreOff) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->upstream.tls, UpstreamTlsSettings{});
  EXPECT_FALSE(s->upstream.tls.enabled);
  EXPECT_TRUE(s->upstream.tls.verify_hostname);
}

TEST(UpstreamTls, SetOverridesReachTheNestedSection) {
  TempDir dir;
  const std::string path = dir.write("pp.toml", kMinimal);
  const auto s = load_settings({path, {"upstream.tls.enabled=true", "upstream.tls.server_name=broker.internal"}});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->upstream.tls.enabled);
  EXPECT_EQ(s->upstream.tls.server_name, "broker.internal");

  const auto typo = load_settings({path, {"upstream.tls.enable=true"}});
  EXPECT_THAT(error_lines(typo), ElementsAre(HasSubstr("unknown key 'upstream.tls.enable'")));
}

TEST(UpstreamTls, UnknownKeyInTheSectionIsNamedWithItsSection) {
  const auto s = parse_settings(std::string(kMinimal) + "[upstream.tls]\nca_fil = \"x\"\n", "pp.toml");
  EXPECT_THAT(error_lines(s), ElementsAre(HasSubstr("unknown key 'upstream.tls.ca_fil'")));
}

TEST(UpstreamTls, FilesMustBeReadableWhenEnabled) {
  const std::string text = std::string(kMinimal) +
                           "[upstream.tls]\nenabled = true\nca_file = \"/nonexistent/ca.pem\"\n"
                           "cert_file = \"/nonexistent/client.pem\"\nkey_file = \"/nonexistent/client.key\"\n";
  const auto lines = error_lines(parse_settings(text, "pp.toml"));
  EXPECT_THAT(lines, ElementsAre(HasSubstr("upstream.tls.ca_file = \"/nonexistent/ca.pem\" cannot be read"),
                                 HasSubstr("upstream.tls.cert_file = \"/nonexistent/client.pem\" cannot be read"),
                                 HasSubstr("upstream.tls.key_file = \"/nonexistent/client.key\" cannot be read")));
  // Disabled: the paths may name files of another host; nothing is checked.
  std::string disabled = text;
  disabled.replace(disabled.find("enabled = true"), 14, "enabled = false");
  EXPECT_TRUE(parse_settings(disabled, "pp.toml").has_value());
}

TEST(UpstreamTls, CertificateAndKeyGoTogetherAndContentsAreNeverPrinted) {
  TempDir dir;
  const std::string secret = "-----BEGIN PRIVATE KEY-----\nMIIsecret\n-----END PRIVATE KEY-----\n";
  const std::string key = dir.write("client.key", secret);
  const auto s =
      parse_settings(std::string(kMinimal) + "[upstream.tls]\nenabled = true\nkey_file = \"" + key + "\"\n", "pp.toml");
  const auto lines = error_lines(s);
  ASSERT_THAT(lines, ElementsAre(HasSubstr("upstream.tls.cert_file and upstream.tls.key_file go together")));
  EXPECT_THAT(lines[0], HasSubstr("pp.toml:5:"));  // at the key_file line: the one the user set
  EXPECT_THAT(lines[0], ::testing::Not(HasSubstr("MIIsecret")));
}

TEST(UpstreamTls, FilesAndNamesApplyOnSighupTheSwitchNeedsARestart) {
  Settings before;
  before.upstream.bootstrap_servers = {"kafka-1:9092"};
  Settings after = before;
  after.upstream.tls.ca_file = "/etc/ca.pem";
  after.upstream.tls.cert_file = "/etc/c.pem";
  after.upstream.tls.key_file = "/etc/c.key";
  after.upstream.tls.server_name = "k";
  after.upstream.tls.verify_hostname = false;
  auto changes = diff_settings(before, after);
  EXPECT_EQ(changes.size(), 5u);
  EXPECT_FALSE(needs_restart(changes));
  EXPECT_EQ(with_live_changes(before, after).upstream.tls, after.upstream.tls);

  after.upstream.tls.enabled = true;
  changes = diff_settings(before, after);
  EXPECT_TRUE(needs_restart(changes));
  EXPECT_EQ(changes.front().key, "upstream.tls.enabled");
}

}  // namespace
}  // namespace pp::config::test
