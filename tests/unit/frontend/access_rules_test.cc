// [[listener.principals]] rules: literal and prefix topics, ANONYMOUS,
// deny by default, IDEMPOTENT_WRITE.
#include "proxy/frontend/access_rules.h"

#include <gtest/gtest.h>

namespace pp {
namespace {

PrincipalGrant grant(std::string name, std::vector<std::string> topics) {
  PrincipalGrant g;
  g.name = std::move(name);
  g.topics = std::move(topics);
  return g;
}

TEST(AccessRules, LiteralAndPrefixTopics) {
  const AccessRules rules({grant("alice", {"orders", "logs-*"})});
  const Access a = rules.resolve(Principal::sasl("PLAIN", "alice"), true);
  EXPECT_TRUE(a.may_write("orders"));
  EXPECT_TRUE(a.may_describe("orders"));
  EXPECT_FALSE(a.may_write("orders2"));
  EXPECT_FALSE(a.may_write("order"));
  EXPECT_TRUE(a.may_write("logs-"));
  EXPECT_TRUE(a.may_write("logs-app1"));
  EXPECT_FALSE(a.may_write("logs"));
  EXPECT_FALSE(a.may_write("xlogs-app1"));
  EXPECT_FALSE(a.is_unrestricted());
}

TEST(AccessRules, StarAloneMatchesEveryTopic) {
  EXPECT_TRUE(topic_matches("*", "anything"));
  EXPECT_TRUE(topic_matches("*", ""));
  EXPECT_FALSE(topic_matches("a", ""));
  EXPECT_TRUE(topic_matches("a*", "a"));
}

TEST(AccessRules, NoRulesAllowEveryoneEverything) {
  const AccessRules rules;
  for (const Principal& p : {Principal::anonymous(), Principal::sasl("SCRAM-SHA-256", "bob"),
                             Principal::tls_certificate("client.example")}) {
    const Access a = rules.resolve(p, false);
    EXPECT_TRUE(a.is_unrestricted());
    EXPECT_TRUE(a.may_write("t"));
    EXPECT_TRUE(a.may_idempotent_write());
    EXPECT_EQ(a.produce_bytes_per_second(), 0U);
  }
}

TEST(AccessRules, UnnamedPrincipalIsDeniedEverything) {
  const AccessRules rules({grant("alice", {"*"})});
  for (const Principal& p : {Principal::sasl("PLAIN", "mallory"), Principal::tls_certificate("mallory")}) {
    const Access a = rules.resolve(p, true);
    EXPECT_FALSE(a.may_write("orders"));
    EXPECT_FALSE(a.may_describe("orders"));
    EXPECT_FALSE(a.may_idempotent_write());
  }
}

TEST(AccessRules, AnonymousLoopbackUnrestrictedUnlessNamed) {
  const AccessRules others({grant("alice", {"orders"})});
  EXPECT_TRUE(others.resolve(Principal::anonymous(), true).may_write("secret"));
  // Beyond loopback (listener.allow_unauthenticated) the rules apply.
  EXPECT_FALSE(others.resolve(Principal::anonymous(), false).may_write("secret"));

  const AccessRules named({grant("alice", {"orders"}), grant("ANONYMOUS", {"public-*"})});
  const Access anonymous = named.resolve(Principal::anonymous(), true);
  EXPECT_TRUE(anonymous.may_write("public-events"));
  EXPECT_FALSE(anonymous.may_write("orders"));
  EXPECT_TRUE(named.resolve(Principal::anonymous(), false).may_write("public-x"));
}

TEST(AccessRules, AuthenticatedUserNamedAnonymousIsNotTheAnonymousRule) {
  const AccessRules rules({grant("ANONYMOUS", {"*"})});
  EXPECT_FALSE(rules.resolve(Principal::sasl("PLAIN", "ANONYMOUS"), true).may_write("t"));
  EXPECT_TRUE(rules.resolve(Principal::anonymous(), true).may_write("t"));
}

TEST(AccessRules, IdempotentWriteFollowsTopicsUnlessWithdrawn) {
  PrincipalGrant withdrawn = grant("carol", {"orders"});
  withdrawn.idempotent_write = false;
  const AccessRules rules({grant("alice", {"orders"}), grant("bob", {}), withdrawn});
  EXPECT_TRUE(rules.resolve(Principal::sasl("PLAIN", "alice"), true).may_idempotent_write());
  EXPECT_FALSE(rules.resolve(Principal::sasl("PLAIN", "bob"), true).may_idempotent_write());
  EXPECT_FALSE(rules.resolve(Principal::sasl("PLAIN", "carol"), true).may_idempotent_write());
  EXPECT_TRUE(rules.resolve(Principal::sasl("PLAIN", "carol"), true).may_write("orders"));
}

TEST(AccessRules, QuotaComesWithTheGrant) {
  PrincipalGrant g = grant("alice", {"orders"});
  g.produce_bytes_per_second = 1000;
  const AccessRules rules({g});
  EXPECT_EQ(rules.resolve(Principal::tls_certificate("alice"), false).produce_bytes_per_second(), 1000U);
}

TEST(AccessRules, LoopbackPeers) {
  EXPECT_TRUE(peer_is_loopback("127.0.0.1:5555"));
  EXPECT_TRUE(peer_is_loopback("127.8.9.1:1"));
  EXPECT_TRUE(peer_is_loopback("[::1]:5555"));
  EXPECT_TRUE(peer_is_loopback("[::ffff:127.0.0.1]:5555"));
  EXPECT_FALSE(peer_is_loopback("10.0.0.1:5555"));
  EXPECT_FALSE(peer_is_loopback("[::ffff:10.0.0.1]:5555"));
  EXPECT_FALSE(peer_is_loopback("[2001:db8::1]:5555"));
  EXPECT_FALSE(peer_is_loopback("?"));
}

TEST(Principal, DescribesNameAndMethod) {
  EXPECT_EQ(Principal::anonymous().describe(), "User:ANONYMOUS");
  EXPECT_TRUE(Principal().is_anonymous());
  EXPECT_EQ(Principal::sasl("SCRAM-SHA-256", "alice").describe(), "User:alice (SASL SCRAM-SHA-256)");
  EXPECT_EQ(Principal::tls_certificate("svc").describe(), "User:svc (TLS certificate)");
  EXPECT_EQ(auth_method_name(Principal::tls_certificate("svc").method()), "tls");
}

}  // namespace
}  // namespace pp
