// No open relay: a client listener beyond loopback is refused unless it
// authenticates its clients (TLS with client_auth = "required", or SASL:
// listener_sasl_config_test.cc) or
// listener.allow_unauthenticated = true, since the proxy produces upstream
// under its own identity. The refusal is one FILE:LINE:COLUMN error at
// listener.address (or the --set that gave it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/client_access.h"
#include "config/load.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> errors_of(const std::string& toml, std::vector<std::string> overrides = {}) {
  return error_lines(parse_settings(toml, "pp.toml", overrides));
}

// kMinimal, then a [listener] table at line 3 whose address is on line 4.
std::string with_listener(const std::string& address, const std::string& more = "") {
  return std::string(kMinimal) + "[listener]\naddress = \"" + address + "\"\n" + more;
}

std::string refusal(const std::string& address) {
  return "listener.address = \"" + address +
         "\" is not loopback and the proxy does not authenticate its clients: an open relay, where anyone who "
         "reaches the port produces to the upstream cluster under the proxy's identity (its credentials and "
         "ACLs). Bind to loopback (127.0.0.1, [::1] or localhost), require client certificates ([listener.tls] "
         "enabled = true, client_auth = \"required\") or SASL ([listener.sasl] mechanisms), or set "
         "listener.allow_unauthenticated = true where a "
         "firewall or network policy restricts who reaches the port";
}

TEST(OpenRelay, OffByDefaultAndTheDefaultAddressIsLoopback) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_FALSE(s->listener.allow_unauthenticated);
  EXPECT_FALSE(serves_unauthenticated_beyond_loopback(s->listener));
}

TEST(OpenRelay, AllInterfacesIsRefusedAtTheAddress) {
  EXPECT_THAT(errors_of(with_listener("0.0.0.0:9092")), ElementsAre("pp.toml:4:11: " + refusal("0.0.0.0:9092")));
}

TEST(OpenRelay, TheIpv6WildcardIsRefused) {
  EXPECT_THAT(errors_of(with_listener("[::]:9092")), ElementsAre("pp.toml:4:11: " + refusal("[::]:9092")));
}

TEST(OpenRelay, OtherAddressesAndHostNamesAreRefused) {
  for (const std::string address : {"10.1.2.3:9092", "192.168.0.1:0", "[fe80::1]:9092", "[::ffff:127.0.0.1]:9092",
                                    "proxy.example.com:9092", "localhost.example.com:9092", "127.0.0.1.nip.io:9092"}) {
    EXPECT_THAT(errors_of(with_listener(address)), ElementsAre("pp.toml:4:11: " + refusal(address))) << address;
  }
}

TEST(OpenRelay, LoopbackAddressesAreAccepted) {
  for (const std::string address : {"127.0.0.1:9092", "127.5.6.7:9092", "127.255.255.255:0", "localhost:9092",
                                    "LocalHost:9092", "[::1]:9092", "[0:0:0:0:0:0:0:1]:9092"}) {
    const auto s = parse_settings(with_listener(address), "pp.toml");
    ASSERT_TRUE(s) << address << ": " << format_errors(s.error());
    EXPECT_FALSE(serves_unauthenticated_beyond_loopback(s->listener)) << address;
  }
}

TEST(OpenRelay, AllowUnauthenticatedAcceptsIt) {
  for (const std::string address : {"0.0.0.0:9092", "[::]:9092", "10.1.2.3:9092", "proxy.example.com:9092"}) {
    const auto s = parse_settings(with_listener(address, "allow_unauthenticated = true\n"), "pp.toml");
    ASSERT_TRUE(s) << address << ": " << format_errors(s.error());
    EXPECT_TRUE(s->listener.allow_unauthenticated);
    // Still the case, so the daemon warns at start.
    EXPECT_TRUE(serves_unauthenticated_beyond_loopback(s->listener)) << address;
  }
  // Said explicitly, false is the default's refusal.
  EXPECT_THAT(errors_of(with_listener("0.0.0.0:9092", "allow_unauthenticated = false\n")),
              ElementsAre("pp.toml:4:11: " + refusal("0.0.0.0:9092")));
}

TEST(OpenRelay, AnAddressFromSetIsRefusedAtTheSet) {
  EXPECT_THAT(errors_of(kMinimal, {"listener.address=0.0.0.0:9092"}),
              ElementsAre("--set:1:18: " + refusal("0.0.0.0:9092")));
  EXPECT_THAT(errors_of(kMinimal, {"log.level=debug", "listener.address=\"10.1.2.3:9092\""}),
              ElementsAre("--set:2:18: " + refusal("10.1.2.3:9092")));
  // The --set wins over the file's loopback address.
  EXPECT_THAT(errors_of(with_listener("127.0.0.1:9092"), {"listener.address=0.0.0.0:9092"}),
              ElementsAre("--set:1:18: " + refusal("0.0.0.0:9092")));
  // Allowed from either place.
  EXPECT_THAT(errors_of(kMinimal, {"listener.address=0.0.0.0:9092", "listener.allow_unauthenticated=true"}), IsEmpty());
  EXPECT_THAT(
      errors_of(with_listener("127.0.0.1:9092", "allow_unauthenticated = true\n"), {"listener.address=0.0.0.0:9092"}),
      IsEmpty());
}

TEST(OpenRelay, ABadValueDoesNotCascade) {
  EXPECT_THAT(errors_of(with_listener("0.0.0.0:9092", "allow_unauthenticated = \"yes\"\n")),
              ElementsAre("pp.toml:5:25: listener.allow_unauthenticated must be true or false, not a string"));
  EXPECT_THAT(errors_of(with_listener("0.0.0.0")),
              ElementsAre(HasSubstr("listener.address = \"0.0.0.0\" is not valid: expected host:port")));
}

TEST(OpenRelay, ReportedWithTheFilesOtherProblems) {
  EXPECT_THAT(errors_of(with_listener("0.0.0.0:9092", "max_connections = 0\n")),
              ElementsAre("pp.toml:4:11: " + refusal("0.0.0.0:9092"),
                          "pp.toml:5:19: listener.max_connections = 0 is out of range [1, 1000000]"));
}

// [listener.tls] with real (readable) files: TLS that requires a client
// certificate authenticates every client; TLS alone, or a certificate only
// requested, does not.
std::string tls_listener(const TempDir& dir, const std::string& address, const std::string& client_auth) {
  const std::string files =
      "cert_file = \"" + dir.write("l.crt", "x") + "\"\nkey_file = \"" + dir.write("l.key", "x") + "\"\n";
  const std::string ca = client_auth == "none" ? "" : "ca_file = \"" + dir.write("ca.crt", "x") + "\"\n";
  return with_listener(address,
                       "[listener.tls]\nenabled = true\n" + files + ca + "client_auth = \"" + client_auth + "\"\n");
}

TEST(OpenRelay, RequiredClientCertificatesAuthenticateEveryClient) {
  TempDir dir;
  const auto s = parse_settings(tls_listener(dir, "0.0.0.0:9092", "required"), "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(clients_authenticated(s->listener));
  EXPECT_FALSE(serves_unauthenticated_beyond_loopback(s->listener));
}

TEST(OpenRelay, TlsWithoutRequiredClientCertificatesIsStillRefused) {
  TempDir dir;
  for (const std::string auth : {"none", "requested"}) {
    EXPECT_THAT(errors_of(tls_listener(dir, "0.0.0.0:9092", auth)),
                ElementsAre("pp.toml:4:11: " + refusal("0.0.0.0:9092")))
        << auth;
    const auto allowed = parse_settings(tls_listener(dir, "127.0.0.1:9092", auth), "pp.toml");
    ASSERT_TRUE(allowed) << format_errors(allowed.error());
    EXPECT_FALSE(clients_authenticated(allowed->listener)) << auth;
  }
}

TEST(OpenRelay, IsLoopbackAddress) {
  EXPECT_TRUE(is_loopback_address("127.0.0.1:9092"));
  EXPECT_TRUE(is_loopback_address("127.0.0.2:0"));
  EXPECT_TRUE(is_loopback_address("localhost:1"));
  EXPECT_TRUE(is_loopback_address("[::1]:9092"));
  EXPECT_FALSE(is_loopback_address("0.0.0.0:9092"));
  EXPECT_FALSE(is_loopback_address("[::]:9092"));
  EXPECT_FALSE(is_loopback_address("128.0.0.1:9092"));
  EXPECT_FALSE(is_loopback_address("127.1:9092"));  // not a dotted quad: a host name to the resolver
  EXPECT_FALSE(is_loopback_address("[::2]:9092"));
  EXPECT_FALSE(is_loopback_address("kafka-proxy:9092"));
}

}  // namespace
}  // namespace pp::config::test
