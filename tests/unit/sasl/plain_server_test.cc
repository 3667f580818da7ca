// PLAIN's server side: the token's grammar, Kafka's authzid rule, and the
// salted hash checked in place of a stored password.
#include "proxy/sasl/plain_server.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>

namespace pp::sasl {
namespace {

Bytes token(std::string_view authzid, std::string_view user, std::string_view password) {
  std::string s(authzid);
  s += '\0';
  s += user;
  s += '\0';
  s += password;
  return Bytes(s.begin(), s.end());
}

std::shared_ptr<const UserStore> users() {
  auto out = std::make_shared<UserStore>();
  (*out)["alice"].plain = make_plain_credential("alice-secret").value();
  (*out)["bob"].scram_sha256 = make_scram_credential(ScramHash::kSha256, "bob-secret").value();
  return out;
}

AuthFailureReason failure_of(const Bytes& t) {
  PlainServer server(users());
  auto out = evaluate_in_place(server, t);
  EXPECT_FALSE(out);
  return out ? AuthFailureReason::kProtocol : out.error().reason;
}

TEST(PlainServer, RightPasswordCompletesWithAnEmptyChallenge) {
  PlainServer server(users());
  auto out = evaluate_in_place(server, token("", "alice", "alice-secret"));
  ASSERT_TRUE(out) << out.error().detail;
  EXPECT_TRUE(out->complete);
  EXPECT_TRUE(out->challenge.empty());
  EXPECT_EQ(server.user(), "alice");
  PlainServer same_authzid(users());
  EXPECT_TRUE(evaluate_in_place(same_authzid, token("alice", "alice", "alice-secret")));
}

TEST(PlainServer, FailuresByReason) {
  EXPECT_EQ(failure_of(token("", "alice", "wrong")), AuthFailureReason::kBadPassword);
  EXPECT_EQ(failure_of(token("", "nobody", "x")), AuthFailureReason::kUnknownUser);
  EXPECT_EQ(failure_of(token("", "bob", "bob-secret")), AuthFailureReason::kUnknownUser);  // no PLAIN entry
  EXPECT_EQ(failure_of(token("bob", "alice", "alice-secret")), AuthFailureReason::kMalformed);
  EXPECT_EQ(failure_of(token("", "", "x")), AuthFailureReason::kMalformed);
  EXPECT_EQ(failure_of(token("", "alice", "")), AuthFailureReason::kMalformed);
  EXPECT_EQ(failure_of(Bytes{'a', 'b'}), AuthFailureReason::kMalformed);
  Bytes four = token("", "alice", "alice-secret");
  four.push_back(0);
  EXPECT_EQ(failure_of(four), AuthFailureReason::kMalformed);
}

TEST(PlainServer, FailureTextHasNoPassword) {
  PlainServer server(users());
  auto out = evaluate_in_place(server, token("", "alice", "hunter2"));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().detail.find("hunter2"), std::string::npos);
}

// The PBKDF2 run is handed out as the step's slow_check, which holds its
// own copies: it runs after the server (and the store) are gone.
TEST(PlainServer, PasswordCheckIsLeftToTheCallerAndOutlivesTheServer) {
  auto server = std::make_unique<PlainServer>(users());
  auto step = server->evaluate(token("", "alice", "alice-secret"));
  ASSERT_TRUE(step) << step.error().detail;
  ASSERT_TRUE(step->slow_check);
  EXPECT_FALSE(step->complete);
  EXPECT_FALSE(server->evaluate(token("", "alice", "alice-secret")));  // one token only
  std::function<bool()> check = std::move(step->slow_check);
  server.reset();
  EXPECT_TRUE(check());

  PlainServer again(users());
  auto wrong = again.evaluate(token("", "alice", "wrong"));
  ASSERT_TRUE(wrong && wrong->slow_check);
  EXPECT_FALSE(wrong->slow_check());
  EXPECT_EQ(again.conclude(false).error().reason, AuthFailureReason::kBadPassword);
  EXPECT_EQ(again.conclude(true).error().reason, AuthFailureReason::kProtocol);  // concluded once
}

// An unknown user costs the same PBKDF2 run (against a decoy credential)
// as a known one, so the delay of the answer does not name users.
TEST(PlainServer, UnknownUserIsCheckedAgainstADecoy) {
  PlainServer server(users(), Bytes(32, 9));
  auto step = server.evaluate(token("", "nobody", "guess"));
  ASSERT_TRUE(step && step->slow_check);
  EXPECT_FALSE(step->slow_check());
  auto out = server.conclude(true);  // even a check that passed: no such user
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, AuthFailureReason::kUnknownUser);
}

}  // namespace
}  // namespace pp::sasl
