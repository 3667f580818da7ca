// The KIP-13/KIP-219 quota arithmetic: sampled rate, Kafka's window rule,
// the throttle formula, and that a client honouring the throttle is held to
// the quota.
#include "proxy/frontend/produce_quota.h"

#include <gtest/gtest.h>

namespace pp {
namespace {

constexpr std::uint64_t kWindow = (ProduceQuota::kSamples - 1) * ProduceQuota::kSampleMs;

TEST(ProduceQuota, WithinQuotaIsNotThrottled) {
  ProduceQuota q(10000);
  // The window is never shorter than kSamples - 1 samples: 1 s here, so a
  // fresh principal may send one window's worth at once.
  EXPECT_EQ(q.record(10000, 1000), 0U);
  EXPECT_DOUBLE_EQ(q.rate(1000), 10000.0 * 1000 / kWindow);
}

TEST(ProduceQuota, OverQuotaThrottleIsKafkasFormula) {
  ProduceQuota q(10000);
  // 20000 bytes in a 1 s window: rate 20000/s, twice the quota:
  // (20000 - 10000) / 10000 * 1000 ms.
  EXPECT_EQ(q.record(20000, 5000), 1000U);
  // 5000 more in the same sample: rate 25000, (25000 - 10000) / 10000 * 1 s.
  EXPECT_EQ(q.record(5000, 5000), 1500U);
}

TEST(ProduceQuota, WindowGrowsWithAgeAndForgetsOldSamples) {
  ProduceQuota q(1000);
  EXPECT_EQ(q.record(1000, 0), 0U);
  // 1050 ms later the first sample is still in (window 1050 ms).
  EXPECT_NEAR(q.rate(1050), 1000.0 * 1000 / 1050, 1e-9);
  // Past kSamples samples it is purged.
  EXPECT_DOUBLE_EQ(q.rate(ProduceQuota::kSamples * ProduceQuota::kSampleMs), 0.0);
}

TEST(ProduceQuota, NoQuotaNeverThrottles) {
  ProduceQuota q(0);
  EXPECT_EQ(q.record(1 << 30, 0), 0U);
}

TEST(ProduceQuota, ThrottleIsBounded) {
  ProduceQuota q(1);
  EXPECT_EQ(q.record(std::uint64_t{1} << 40, 0), ProduceQuota::kMaxThrottleMs);
}

// A client offering ten times the quota that waits out each throttle (what
// KIP-219 clients do, and what the muted connection forces on the others) is
// held to the quota within 10 % over 30 s.
TEST(ProduceQuota, HonouredThrottleHoldsOfferedLoadToQuota) {
  constexpr std::uint64_t kQuota = 100000;
  constexpr std::uint64_t kRequest = 4000;  // 10x the quota: one request per 4 ms
  ProduceQuota q(kQuota);
  std::uint64_t now = 0;
  std::uint64_t sent = 0;
  while (now < 30000) {
    sent += kRequest;
    now += q.record(kRequest, now) + 4;
  }
  const double rate = static_cast<double>(sent) * 1000.0 / static_cast<double>(now);
  EXPECT_NEAR(rate, static_cast<double>(kQuota), 0.1 * kQuota) << sent << " bytes in " << now << " ms";
}

}  // namespace
}  // namespace pp
