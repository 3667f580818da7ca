// LoginThrottle: the delay before a failed login's answer doubles with the
// recent failures of one address, is capped, is forgotten after a quiet
// minute, and the table of addresses stays bounded.
#include "proxy/frontend/login_throttle.h"

#include <gtest/gtest.h>

#include <string>

namespace pp {
namespace {

TEST(LoginThrottle, DelayDoublesPerRecentFailureUpToTheCap) {
  LoginThrottle t;
  EXPECT_EQ(t.delay_for("10.0.0.1", 0), LoginThrottle::kBaseDelayMs);
  EXPECT_EQ(t.record_failure("10.0.0.1", 0), 250u);
  EXPECT_EQ(t.record_failure("10.0.0.1", 10), 500u);
  EXPECT_EQ(t.record_failure("10.0.0.1", 20), 1000u);
  EXPECT_EQ(t.delay_for("10.0.0.1", 30), 2000u);
  for (int i = 0; i < 40; ++i) t.record_failure("10.0.0.1", 30);
  EXPECT_EQ(t.record_failure("10.0.0.1", 40), LoginThrottle::kMaxDelayMs);
  // Another address is not slowed by the first one's failures.
  EXPECT_EQ(t.record_failure("10.0.0.2", 40), 250u);
}

TEST(LoginThrottle, AQuietMinuteForgetsTheFailures) {
  LoginThrottle t;
  for (int i = 0; i < 5; ++i) t.record_failure("10.0.0.1", 1000);
  EXPECT_EQ(t.record_failure("10.0.0.1", 1000 + LoginThrottle::kForgetAfterMs + 1), 250u);
}

TEST(LoginThrottle, TheTableIsBoundedLeastRecentlyFailedFirst) {
  LoginThrottle t(3);
  t.record_failure("a", 1);
  t.record_failure("a", 2);
  t.record_failure("b", 3);
  t.record_failure("c", 4);
  t.record_failure("a", 5);  // a is the most recent again
  t.record_failure("d", 6);  // evicts b
  EXPECT_EQ(t.addresses(), 3u);
  EXPECT_EQ(t.delay_for("a", 7), 2000u);  // its three failures were kept
  EXPECT_EQ(t.delay_for("b", 7), 250u);   // forgotten
  for (int i = 0; i < 10000; ++i) t.record_failure("x" + std::to_string(i), 8);
  EXPECT_EQ(t.addresses(), 3u);
}

TEST(LoginThrottle, PeerAddressDropsThePort) {
  EXPECT_EQ(peer_address("127.0.0.1:5555"), "127.0.0.1");
  EXPECT_EQ(peer_address("[::1]:5555"), "::1");
  EXPECT_EQ(peer_address("noport"), "noport");
}

}  // namespace
}  // namespace pp
