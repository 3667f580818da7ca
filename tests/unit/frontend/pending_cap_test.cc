// The per-connection pending-request cap sized from the memory budget
// (frontend_config.h, issue 17's Kafka latency).
#include <gtest/gtest.h>

#include "proxy/frontend/frontend_config.h"

namespace pp {
namespace {

TEST(PendingRequestsCap, DefaultBudgetAllowsAThousandPendingRequests) {
  // 64 MiB, producer.buffer_memory_bytes' default: 1024, so a client sending
  // 5,800 requests/s keeps reading through 175 ms inside the proxy.
  EXPECT_EQ(pending_requests_cap(64U * 1048576U), 1024U);
}

TEST(PendingRequestsCap, GrowsWithTheBudget) {
  EXPECT_EQ(pending_requests_cap(256U * 1048576U), 4096U);
  EXPECT_LT(pending_requests_cap(64U * 1048576U), pending_requests_cap(128U * 1048576U));
}

TEST(PendingRequestsCap, SmallBudgetsKeepTheOldFloor) {
  EXPECT_EQ(pending_requests_cap(1048576U), kMinPendingRequestsPerConnection);
  EXPECT_EQ(pending_requests_cap(0), kMinPendingRequestsPerConnection);
  EXPECT_EQ(pending_requests_cap(8U * 1048576U), 128U);
}

}  // namespace
}  // namespace pp
