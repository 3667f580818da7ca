// PLAIN's encoding, OAUTHBEARER's message, the token source (file re-read on
// a new mtime, the last good token kept while the file is gone, JWT expiry,
// the command) and the authenticator's secret handling.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "proxy/sasl/base64.h"
#include "proxy/upstream/sasl/authenticator.h"
#include "proxy/upstream/sasl/oauthbearer.h"
#include "proxy/upstream/sasl/plain.h"
#include "proxy/upstream/sasl/token_source.h"

namespace pp::upstream::sasl {
namespace {

namespace fs = std::filesystem;
using ::pp::sasl::base64_encode;

std::string text(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sasl-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name, const std::string& contents, std::int64_t mtime_s = 0) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary | std::ios::trunc) << contents;
    if (mtime_s != 0) {
      const timespec times[2] = {{mtime_s, 0}, {mtime_s, 0}};
      ::utimensat(AT_FDCWD, p.c_str(), times, 0);
    }
    return p;
  }

 private:
  std::string path_;
};

// An unsecured JWS (alg none), as Kafka's unsecured validator accepts.
std::string jwt_with_exp(std::int64_t exp_seconds) {
  auto url = [](std::string s) {
    std::string b = base64_encode(to_bytes(s));
    for (char& c : b) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!b.empty() && b.back() == '=') b.pop_back();
    return b;
  };
  return url(R"({"alg":"none"})") + "." + url(R"({"sub":"proxy","exp": )" + std::to_string(exp_seconds) + "}") + ".";
}

TEST(Plain, Rfc4616Encoding) {
  PlainMechanism m("alice", "s3cret");
  EXPECT_EQ(text(m.initial_response().value()), std::string("\0alice\0s3cret", 13));
  auto done = m.evaluate({});
  ASSERT_TRUE(done);
  EXPECT_FALSE(*done);
}

TEST(Plain, RefusesNulAndChallenges) {
  EXPECT_FALSE(PlainMechanism(std::string("a\0b", 3), "p").initial_response());
  PlainMechanism m("a", "b");
  ASSERT_TRUE(m.initial_response());
  EXPECT_FALSE(m.evaluate(to_bytes("huh")));
}

TEST(OAuthBearer, ClientFirstMessage) {
  OAuthBearerMechanism m("abc.def.");
  EXPECT_EQ(text(m.initial_response().value()),
            "n,,\x01"
            "auth=Bearer abc.def.\x01\x01");
  auto done = m.evaluate({});
  ASSERT_TRUE(done);
  EXPECT_FALSE(*done);
  EXPECT_FALSE(oauthbearer_client_first(""));
  EXPECT_FALSE(oauthbearer_client_first("has space"));
}

TEST(OAuthBearer, ErrorChallengeIsAcknowledged) {
  OAuthBearerMechanism m("tok");
  ASSERT_TRUE(m.initial_response());
  auto ack = m.evaluate(to_bytes(R"({"status":"invalid_token"})"));
  ASSERT_TRUE(ack && *ack);
  EXPECT_EQ(**ack, Bytes{0x01});
  EXPECT_FALSE(m.evaluate({}));
}

TEST(TokenSource, JwtExpiry) {
  EXPECT_EQ(jwt_expiry_seconds(jwt_with_exp(1900000000)), 1900000000);
  EXPECT_FALSE(jwt_expiry_seconds("opaque-token"));
  EXPECT_FALSE(jwt_expiry_seconds("a.!!!.c"));
}

TEST(TokenSource, FileReReadWhenItsMtimeChanges) {
  TempDir dir;
  const std::string path = dir.file("token", "first\n", 1000);
  TokenSource source(TokenSourceConfig{path, {}, 3600000, 1000});
  EXPECT_EQ(source.token(0).value(), "first");
  dir.file("token", "second", 1000);  // same mtime: the cached token stays
  EXPECT_EQ(source.token(1).value(), "first");
  dir.file("token", "third", 2000);
  EXPECT_EQ(source.token(2).value(), "third");
}

TEST(TokenSource, MissingFileKeepsTheLastTokenUntilItExpires) {
  TempDir dir;
  const std::int64_t now_ms = 1'800'000'000'000;
  const std::string path = dir.file("token", jwt_with_exp(now_ms / 1000 + 600));
  TokenSource source(TokenSourceConfig{path, {}, 3600000, 1000});
  const std::string token = source.token(now_ms).value();
  fs::remove(path);
  EXPECT_EQ(source.token(now_ms + 60'000).value(), token);
  auto expired = source.token(now_ms + 600'000);
  ASSERT_FALSE(expired);
  EXPECT_NE(expired.error().reason.find("has expired"), std::string::npos);
  EXPECT_NE(expired.error().reason.find(path), std::string::npos);
}

TEST(TokenSource, ExpiredJwtInFileFails) {
  TempDir dir;
  const std::string path = dir.file("token", jwt_with_exp(100));
  TokenSource source(TokenSourceConfig{path, {}, 3600000, 1000});
  EXPECT_FALSE(source.token(1'800'000'000'000));
}

TEST(TokenSource, CommandOutputCachedForItsLifetime) {
  // The command is run by the connection (net::ChildProcess); the source
  // says when it is due and keeps what it printed.
  TokenSource source(TokenSourceConfig{{}, {"helper"}, 10000, 5000});
  EXPECT_TRUE(source.command_due(0));
  EXPECT_FALSE(source.token(0));  // nothing before the command answered
  ASSERT_TRUE(source.command_finished(std::string("tok-1\n"), 0));
  EXPECT_FALSE(source.command_due(5000));
  EXPECT_EQ(source.token(5000).value(), "tok-1");
  EXPECT_TRUE(source.command_due(20000));  // lifetime over (less the margin)
  ASSERT_TRUE(source.command_finished(std::string("tok-2"), 20000));
  EXPECT_EQ(source.token(20000).value(), "tok-2");
  source.invalidate();  // SIGHUP: asked afresh although still valid
  EXPECT_TRUE(source.command_due(20001));
}

TEST(TokenSource, CommandFailuresAreClearAndKeepAValidToken) {
  TokenSource source(TokenSourceConfig{{}, {"/usr/bin/helper"}, 10000, 5000});
  auto failed = source.command_finished(std::unexpected(std::string("exited with status 3")), 0);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().reason, "OAUTHBEARER: token_command /usr/bin/helper exited with status 3");
  auto empty = source.command_finished(std::string(" \n"), 0);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().reason.find("printed no token"), std::string::npos);
  auto expired = source.command_finished(jwt_with_exp(100), 1'800'000'000'000);
  ASSERT_FALSE(expired);
  EXPECT_NE(expired.error().reason.find("expired"), std::string::npos);
  EXPECT_EQ(expired.error().reason.find("eyJ"), std::string::npos);  // never the token itself
  ASSERT_TRUE(source.command_finished(std::string("good"), 0));
  source.invalidate();
  // A refresh that fails keeps the token still valid, and is not retried until it expires.
  EXPECT_TRUE(source.command_finished(std::unexpected(std::string("timed out")), 1000));
  EXPECT_FALSE(source.command_due(1000));
  EXPECT_EQ(source.token(1000).value(), "good");
}

TEST(Authenticator, PasswordFromFileOrEnvironmentNeverInErrors) {
  TempDir dir;
  const std::string path = dir.file("password", "hunter2\n");
  auto a = Authenticator::create(SaslConfig{"PLAIN", "alice", path, "", "", {}, 3600000});
  ASSERT_TRUE(a) << a.error();
  auto mech = (*a)->begin(0);
  ASSERT_TRUE(mech);
  EXPECT_EQ(text((*mech)->initial_response().value()), std::string("\0alice\0hunter2", 14));

  ::setenv("PP_SASL_TEST_PASSWORD", "from-env", 1);
  auto env = Authenticator::create(SaslConfig{"SCRAM-SHA-512", "alice", "", "PP_SASL_TEST_PASSWORD", "", {}, 1});
  ASSERT_TRUE(env) << env.error();
  EXPECT_EQ((*env)->mechanism(), "SCRAM-SHA-512");

  EXPECT_FALSE(Authenticator::create(SaslConfig{"PLAIN", "alice", path, "PP_SASL_TEST_PASSWORD", "", {}, 1}));
  EXPECT_FALSE(Authenticator::create(SaslConfig{"PLAIN", "", path, "", "", {}, 1}));
  EXPECT_FALSE(Authenticator::create(SaslConfig{"GSSAPI", "alice", path, "", "", {}, 1}));
  auto missing = Authenticator::create(SaslConfig{"PLAIN", "alice", path + ".gone", "", "", {}, 1});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().find("hunter2"), std::string::npos);
}

TEST(Authenticator, ReloadRereadsThePasswordAndKeepsItOnError) {
  TempDir dir;
  const std::string path = dir.file("password", "one");
  auto a = Authenticator::create(SaslConfig{"PLAIN", "u", path, "", "", {}, 1}).value();
  dir.file("password", "two");
  ASSERT_TRUE(a->reload());
  EXPECT_EQ(text(a->begin(0).value()->initial_response().value()), std::string("\0u\0two", 6));
  fs::remove(path);
  EXPECT_FALSE(a->reload());
  EXPECT_EQ(text(a->begin(0).value()->initial_response().value()), std::string("\0u\0two", 6));
}

TEST(Authenticator, OAuthBearerNeedsExactlyOneTokenSource) {
  EXPECT_FALSE(Authenticator::create(SaslConfig{"OAUTHBEARER", "", "", "", "", {}, 1}));
  EXPECT_FALSE(Authenticator::create(SaslConfig{"OAUTHBEARER", "", "", "", "/f", {"cmd"}, 1}));
  auto a = Authenticator::create(SaslConfig{"OAUTHBEARER", "", "", "", "", {"printf", "tok"}, 60000});
  ASSERT_TRUE(a);
  ASSERT_TRUE(a.value()->token_command_due(0));
  EXPECT_EQ(a.value()->token_command().front(), "printf");
  ASSERT_TRUE(a.value()->token_command_finished(std::string("tok"), 0));
  EXPECT_FALSE(a.value()->token_command_due(0));
  EXPECT_EQ(text(a.value()->begin(0).value()->initial_response().value()),
            "n,,\x01"
            "auth=Bearer tok\x01\x01");
}

}  // namespace
}  // namespace pp::upstream::sasl
