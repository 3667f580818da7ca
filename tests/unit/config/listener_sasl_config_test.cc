// [listener.sasl]: the keys, their checks, the PLAIN-without-TLS rule, and
// SASL counting as client authentication for the no-open-relay rule.
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

std::vector<std::string> errors_of(const std::string& toml) {
  return error_lines(parse_settings(toml, "pp.toml", {}));
}

// kMinimal, then [listener.sasl] at line 3.
std::string with_sasl(const std::string& body) {
  return std::string(kMinimal) + "[listener.sasl]\n" + body;
}

TEST(ListenerSasl, OffByDefault) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_FALSE(s->listener.sasl.enabled());
  EXPECT_EQ(s->listener.sasl.session_lifetime_ms, 0);
}

TEST(ListenerSasl, ScramWithAUsersFileLoads) {
  TempDir dir;
  const std::string users = dir.write("users.toml", "");
  const auto s = parse_settings(with_sasl("mechanisms = [\"SCRAM-SHA-256\", \"SCRAM-SHA-512\"]\nusers_file = \"" +
                                          users + "\"\nsession_lifetime_ms = 3600000\n"),
                                "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_THAT(s->listener.sasl.mechanisms, ElementsAre("SCRAM-SHA-256", "SCRAM-SHA-512"));
  EXPECT_EQ(s->listener.sasl.users_file, users);
  EXPECT_EQ(s->listener.sasl.session_lifetime_ms, 3600000);
}

TEST(ListenerSasl, UnknownOrRepeatedMechanismsAreRefused) {
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"GSSAPI\"]\n")),
              ElementsAre(HasSubstr("pp.toml:4:14: listener.sasl.mechanisms has \"GSSAPI\", not one of PLAIN")));
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"PLAIN\", \"PLAIN\"]\n")),
              ElementsAre(HasSubstr("listener.sasl.mechanisms names PLAIN twice")));
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [1]\n")),
              ElementsAre(HasSubstr("listener.sasl.mechanisms[0] must be a string")));
}

TEST(ListenerSasl, MechanismsAndUsersFileGoTogether) {
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"SCRAM-SHA-256\"]\n")),
              ElementsAre(HasSubstr("pp.toml:4:14: listener.sasl.mechanisms is set, but listener.sasl.users_file "
                                    "is empty")));
  TempDir dir;
  const std::string users = dir.write("users.toml", "");
  EXPECT_THAT(errors_of(with_sasl("users_file = \"" + users + "\"\n")),
              ElementsAre(HasSubstr("listener.sasl.users_file is set, but listener.sasl.mechanisms is empty")));
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"SCRAM-SHA-256\"]\nusers_file = \"" + dir.path("missing") + "\"\n")),
              ElementsAre(HasSubstr("listener.sasl.users_file = \"" + dir.path("missing") +
                                    "\" is not valid: cannot "
                                    "be read")));
}

TEST(ListenerSasl, PlainWithoutTlsIsRefusedUnlessAllowed) {
  TempDir dir;
  const std::string users = "users_file = \"" + dir.write("users.toml", "") + "\"\n";
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"PLAIN\"]\n" + users)),
              ElementsAre(HasSubstr("listener.sasl.mechanisms has PLAIN, which receives passwords in the clear "
                                    "without listener TLS")));
  EXPECT_THAT(errors_of(with_sasl("mechanisms = [\"PLAIN\"]\n" + users + "allow_plain_without_tls = true\n")),
              IsEmpty());
}

// No open relay: SASL on the listener authenticates every client, so an
// address beyond loopback needs no listener.allow_unauthenticated.
TEST(ListenerSasl, CountsAsClientAuthenticationForTheOpenRelayRule) {
  TempDir dir;
  const std::string toml = std::string(kMinimal) + "[listener]\naddress = \"0.0.0.0:9092\"\n[listener.sasl]\n" +
                           "mechanisms = [\"SCRAM-SHA-512\"]\nusers_file = \"" + dir.write("users.toml", "") + "\"\n";
  const auto s = parse_settings(toml, "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_TRUE(clients_authenticated(s->listener));
  EXPECT_FALSE(serves_unauthenticated_beyond_loopback(s->listener));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[listener]\naddress = \"0.0.0.0:9092\"\n"),
              ElementsAre(HasSubstr("is not loopback and the proxy does not authenticate its clients")));
}

}  // namespace
}  // namespace pp::config::test
