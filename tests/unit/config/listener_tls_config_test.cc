// [listener.tls]: client TLS on the listener. Parsing, defaults, the checks
// that catch a half-configured listener, and which keys a SIGHUP applies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/diff.h"
#include "config/load.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string section(const std::string& body) {
  return std::string(kMinimal) + "[listener.tls]\n" + body;
}

TEST(ListenerTls, DefaultsAreOff) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->listener.tls, ListenerTlsSettings{});
  EXPECT_FALSE(s->listener.tls.enabled);
  EXPECT_EQ(s->listener.tls.client_auth, ClientAuth::kNone);
  EXPECT_EQ(s->listener.tls.handshake_timeout_ms, 10000);
}

TEST(ListenerTls, ReadFromItsOwnSection) {
  TempDir dir;
  const std::string cert = dir.write("l.crt", "x");
  const std::string key = dir.write("l.key", "x");
  const std::string ca = dir.write("ca.crt", "x");
  const auto s =
      parse_settings(section("enabled = true\ncert_file = \"" + cert + "\"\nkey_file = \"" + key + "\"\nca_file = \"" +
                             ca + "\"\nclient_auth = \"required\"\nhandshake_timeout_ms = 2500\n"),
                     "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(s->listener.tls.enabled);
  EXPECT_EQ(s->listener.tls.cert_file, cert);
  EXPECT_EQ(s->listener.tls.key_file, key);
  EXPECT_EQ(s->listener.tls.ca_file, ca);
  EXPECT_EQ(s->listener.tls.client_auth, ClientAuth::kRequired);
  EXPECT_EQ(s->listener.tls.handshake_timeout_ms, 2500);
}

TEST(ListenerTls, ClientAuthIsOneOfThreeWithAHint) {
  EXPECT_THAT(error_lines(parse_settings(section("client_auth = \"require\"\n"), "pp.toml")),
              ElementsAre("pp.toml:4:15: listener.tls.client_auth = \"require\" is not one of none | requested | "
                          "required; did you mean \"required\"?"));
}

TEST(ListenerTls, EnabledNeedsACertificateAndKey) {
  EXPECT_THAT(error_lines(parse_settings(section("enabled = true\n"), "pp.toml")),
              ElementsAre(HasSubstr("listener.tls.cert_file is required with listener.tls.enabled = true"),
                          HasSubstr("listener.tls.key_file is required with listener.tls.enabled = true")));
}

TEST(ListenerTls, FilesMustBeReadableAndAreNeverPrinted) {
  TempDir dir;
  const std::string key = dir.write("l.key", "-----BEGIN PRIVATE KEY-----\nMIIsecret\n");
  const auto lines = error_lines(parse_settings(
      section("enabled = true\ncert_file = \"/nonexistent/l.crt\"\nkey_file = \"" + key + "\"\n"), "pp.toml"));
  ASSERT_THAT(lines, ElementsAre("pp.toml:5:13: listener.tls.cert_file = \"/nonexistent/l.crt\" cannot be read: "
                                 "No such file or directory"));
  EXPECT_THAT(lines[0], ::testing::Not(HasSubstr("MIIsecret")));
}

TEST(ListenerTls, ClientCertificatesNeedACaAndACaNeedsClientCertificates) {
  TempDir dir;
  const std::string files = "enabled = true\ncert_file = \"" + dir.write("l.crt", "x") + "\"\nkey_file = \"" +
                            dir.write("l.key", "x") + "\"\n";
  EXPECT_THAT(error_lines(parse_settings(section(files + "client_auth = \"requested\"\n"), "pp.toml")),
              ElementsAre("pp.toml:7:15: listener.tls.client_auth = \"requested\" needs listener.tls.ca_file, the CA "
                          "client certificates chain to"));
  EXPECT_THAT(
      error_lines(parse_settings(section(files + "ca_file = \"" + dir.write("ca.crt", "x") + "\"\n"), "pp.toml")),
      ElementsAre(HasSubstr("listener.tls.ca_file is set, but listener.tls.client_auth = \"none\" asks no "
                            "client for a certificate")));
  EXPECT_THAT(error_lines(parse_settings(section("client_auth = \"required\"\n"), "pp.toml")),
              ElementsAre("pp.toml:4:15: listener.tls.client_auth = \"required\" needs listener.tls.enabled = true"));
}

TEST(ListenerTls, DisabledChecksNoFiles) {
  EXPECT_THAT(error_lines(parse_settings(section("enabled = false\ncert_file = \"/nonexistent/l.crt\"\n"), "pp.toml")),
              IsEmpty());
}

TEST(ListenerTls, HandshakeTimeoutIsBounded) {
  EXPECT_THAT(error_lines(parse_settings(section("handshake_timeout_ms = 10\n"), "pp.toml")),
              ElementsAre(HasSubstr("listener.tls.handshake_timeout_ms = 10 is out of range [100, 600000]")));
}

TEST(ListenerTls, SetReachesTheSection) {
  TempDir dir;
  const std::string path = dir.write("pp.toml", kMinimal);
  const auto s = load_settings({path, {"listener.tls.handshake_timeout_ms=2000"}});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->listener.tls.handshake_timeout_ms, 2000);
}

// SIGHUP: new file paths apply to new connections (the daemon re-reads the
// files on every SIGHUP); switching TLS or client_auth needs a restart.
TEST(ListenerTls, FilesApplyOnSighupTheSwitchesNeedARestart) {
  Settings before;
  before.upstream.bootstrap_servers = {"kafka-1:9092"};
  Settings after = before;
  after.listener.tls.cert_file = "/etc/l2.crt";
  after.listener.tls.key_file = "/etc/l2.key";
  after.listener.tls.ca_file = "/etc/ca2.crt";
  auto changes = diff_settings(before, after);
  EXPECT_EQ(changes.size(), 3u);
  EXPECT_FALSE(needs_restart(changes));
  EXPECT_EQ(with_live_changes(before, after).listener.tls, after.listener.tls);

  for (auto flip : {+[](Settings& s) { s.listener.tls.enabled = true; },
                    +[](Settings& s) { s.listener.tls.client_auth = ClientAuth::kRequired; },
                    +[](Settings& s) { s.listener.tls.handshake_timeout_ms = 5000; }}) {
    Settings restart = before;
    flip(restart);
    changes = diff_settings(before, restart);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_TRUE(needs_restart(changes)) << changes.front().key;
    EXPECT_EQ(with_live_changes(before, restart).listener.tls, before.listener.tls);
  }
}

}  // namespace
}  // namespace pp::config::test
