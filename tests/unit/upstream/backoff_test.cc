#include "proxy/base/backoff.h"

#include <gtest/gtest.h>

namespace pp::upstream {
namespace {

TEST(Backoff, DoublesFromTheInitialValueUpToTheCap) {
  EXPECT_EQ(backoff_ms(100, 1000, 0), 100u);
  EXPECT_EQ(backoff_ms(100, 1000, 1), 200u);
  EXPECT_EQ(backoff_ms(100, 1000, 3), 800u);
  EXPECT_EQ(backoff_ms(100, 1000, 4), 1000u);
  EXPECT_EQ(backoff_ms(100, 1000, 1000), 1000u) << "no overflow past 30 doublings";
  EXPECT_EQ(backoff_ms(0, 1000, 5), 0u);
  EXPECT_EQ(backoff_ms(100, 1000, -1), 100u);
}

TEST(ExponentialBackoff, GrowsDoublingWithinJitterAndCaps) {
  ExponentialBackoff b(50, 1000);
  for (int round = 0; round < 50; ++round) {
    EXPECT_GE(b.backoff_ms(1), 40u);
    EXPECT_LE(b.backoff_ms(1), 60u);
    EXPECT_GE(b.backoff_ms(3), 160u);
    EXPECT_LE(b.backoff_ms(3), 240u);
    EXPECT_GE(b.backoff_ms(30), 800u);
    EXPECT_LE(b.backoff_ms(30), 1200u);
  }
}

TEST(ExponentialBackoff, JitterSpreadsAttempts) {
  ExponentialBackoff b(1000, 1000);
  std::uint64_t lo = 1'000'000, hi = 0;
  for (int i = 0; i < 200; ++i) {
    const auto v = b.backoff_ms(1);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(lo, hi);
}

}  // namespace
}  // namespace pp::upstream
