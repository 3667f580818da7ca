// [upstream.sasl]: the nested section loads from the file and from --set,
// each mechanism demands exactly its secrets, files must be readable, PLAIN
// needs TLS or an explicit allowance, and no message shows a secret.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> errors_of(const std::string& toml, std::vector<std::string> overrides = {}) {
  return error_lines(parse_settings(toml, "pp.toml", overrides));
}

TEST(SaslConfig, OffByDefault) {
  const auto s = parse_settings(kMinimal, "pp.toml");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->upstream.sasl.mechanism, "");
  EXPECT_FALSE(s->upstream.sasl.allow_plain_without_tls);
}

TEST(SaslConfig, ScramFromTheFileAndFromSet) {
  TempDir dir;
  const std::string password = dir.write("password", "hunter2\n");
  const auto s = parse_settings(std::string(kMinimal) + "[upstream.sasl]\nmechanism = \"SCRAM-SHA-512\"\n" +
                                    "username = \"proxy\"\npassword_file = \"" + password + "\"\n",
                                "pp.toml");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(s->upstream.sasl.mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(s->upstream.sasl.password_file, password);

  const auto set =
      parse_settings(kMinimal, "pp.toml",
                     std::vector<std::string>{"upstream.sasl.mechanism=OAUTHBEARER",
                                              R"(upstream.sasl.token_command=["helper", "--audience", "x"])"});
  ASSERT_TRUE(set) << format_errors(set.error());
  EXPECT_EQ(set->upstream.sasl.token_command, (std::vector<std::string>{"helper", "--audience", "x"}));
}

TEST(SaslConfig, UnknownKeyAndMechanism) {
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[upstream.sasl]\nmechanizm = \"PLAIN\"\n"),
              ElementsAre("pp.toml:4:1: unknown key 'upstream.sasl.mechanizm'; did you mean "
                          "'upstream.sasl.mechanism'?"));
  EXPECT_THAT(errors_of(std::string(kMinimal) + "[upstream.sasl]\nmechanism = \"GSSAPI\"\n"),
              ElementsAre(HasSubstr("upstream.sasl.mechanism = \"GSSAPI\" is not valid: not one of")));
}

TEST(SaslConfig, EachMechanismNeedsExactlyItsSecrets) {
  TempDir dir;
  const std::string password = dir.write("password", "hunter2");
  const std::string base = std::string(kMinimal) + "[upstream.sasl]\n";
  EXPECT_THAT(errors_of(base + "mechanism = \"SCRAM-SHA-256\"\nusername = \"u\"\n"),
              ElementsAre(HasSubstr("needs exactly one of upstream.sasl.password_file, upstream.sasl.password_env")));
  EXPECT_THAT(errors_of(base + "mechanism = \"SCRAM-SHA-256\"\nusername = \"u\"\npassword_file = \"" + password +
                        "\"\npassword_env = \"PW\"\n"),
              ElementsAre(HasSubstr("needs exactly one of")));
  EXPECT_THAT(errors_of(base + "mechanism = \"SCRAM-SHA-256\"\npassword_env = \"PW\"\n"),
              ElementsAre(HasSubstr("SCRAM-SHA-256 needs upstream.sasl.username")));
  EXPECT_THAT(errors_of(base + "mechanism = \"OAUTHBEARER\"\n"),
              ElementsAre(HasSubstr("OAUTHBEARER needs exactly one of upstream.sasl.token_file")));
  EXPECT_THAT(errors_of(base + "mechanism = \"OAUTHBEARER\"\ntoken_command = [\"h\"]\npassword_env = \"PW\"\n"),
              ElementsAre(HasSubstr("upstream.sasl.password_env is set, but upstream.sasl.mechanism = "
                                    "\"OAUTHBEARER\" takes no password")));
  EXPECT_THAT(errors_of(base + "username = \"u\"\n"),
              ElementsAre(HasSubstr("upstream.sasl.username is set, but upstream.sasl.mechanism is empty")));
}

TEST(SaslConfig, SecretFilesMustBeReadableAndAreNeverShown) {
  TempDir dir;
  const std::string base = std::string(kMinimal) + "[upstream.sasl]\nmechanism = \"SCRAM-SHA-256\"\nusername = \"u\"\n";
  const auto missing = errors_of(base + "password_file = \"" + dir.path("nope") + "\"\n");
  EXPECT_THAT(missing, ElementsAre(HasSubstr("cannot be read: No such file or directory")));
  const std::string secret = dir.write("secret", "hunter2-do-not-print");
  const auto wrong = errors_of(base + "password_file = \"" + secret + "\"\npassword_env = \"1BAD\"\n");
  for (const auto& line : wrong) EXPECT_THAT(line, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_THAT(errors_of(base + "password_env = \"1BAD\"\n"),
              ElementsAre(HasSubstr("not an environment variable name")));
  EXPECT_THAT(errors_of(base + "password_file = \"" + dir.path("") + "\"\n"), ElementsAre(HasSubstr("is a directory")));
}

TEST(SaslConfig, PlainNeedsTlsOrAnExplicitAllowance) {
  const std::string base =
      std::string(kMinimal) + "[upstream.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword_env = \"PW\"\n";
  EXPECT_THAT(errors_of(base), ElementsAre(HasSubstr("sends the password in the clear without upstream TLS")));
  EXPECT_THAT(errors_of(base + "allow_plain_without_tls = true\n"), ElementsAre());
}

TEST(SaslConfig, TokenCommandRunsWithoutAShell) {
  const std::string base = std::string(kMinimal) + "[upstream.sasl]\nmechanism = \"OAUTHBEARER\"\n";
  EXPECT_THAT(errors_of(base + "token_command = [\"helper\", \"\"]\n"),
              ElementsAre(HasSubstr("has an empty argument")));
  EXPECT_THAT(errors_of(base + "token_command = [\"helper\", 3]\n"),
              ElementsAre(HasSubstr("upstream.sasl.token_command[1] must be a string")));
}

TEST(SaslConfig, NotWithTheEmbeddedCluster) {
  EXPECT_THAT(errors_of("[upstream]\nbootstrap_servers = [\"embedded\"]\n[upstream.sasl]\nmechanism = "
                        "\"OAUTHBEARER\"\ntoken_command = [\"h\"]\n"),
              ElementsAre(HasSubstr("the embedded demo cluster has no SASL")));
}

}  // namespace
}  // namespace pp::config::test
