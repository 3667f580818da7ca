// The fair share by principal: the budget over the active principals, then
// over each principal's active connections, so one principal's many (or
// stalled, or throttled) connections cannot hold the others' part.
#include <gtest/gtest.h>
#include <uv.h>

#include "proxy/frontend/flow_control.h"

namespace pp {
namespace {

// A loop initialised before the members below use it, closed after them.
struct Loop {
  Loop() { uv_loop_init(&loop); }
  ~Loop() {
    uv_run(&loop, UV_RUN_NOWAIT);
    uv_loop_close(&loop);
  }
  uv_loop_t loop{};
};

class PrincipalShareTest : public ::testing::Test {
 protected:
  ~PrincipalShareTest() override {
    flow_.reset();
    deferred_.reset();
    uv_run(&loop_.loop, UV_RUN_NOWAIT);
  }

  Loop loop_;
  MemoryBudget budget_{1200000};
  net::TcpListener listener_;
  std::unique_ptr<net::Deferred> deferred_ = std::make_unique<net::Deferred>(&loop_.loop);
  FrontendCounters counters_;
  FrontendObserver observer_;
  std::unique_ptr<FlowControl> flow_ =
      std::make_unique<FlowControl>(&loop_.loop, budget_, listener_, *deferred_, counters_, observer_);
};

TEST_F(PrincipalShareTest, OnePrincipalIsThePerConnectionShare) {
  for (int i = 0; i < 3; ++i) flow_->set_active(true, "ANONYMOUS");
  EXPECT_EQ(flow_->fair_share(true, "ANONYMOUS"), 400000U);
  EXPECT_EQ(flow_->fair_share(true, "ANONYMOUS"), flow_->fair_share(true));
  // A newcomer of the same principal counts itself in.
  EXPECT_EQ(flow_->fair_share(false, "ANONYMOUS"), 300000U);
}

TEST_F(PrincipalShareTest, ManyConnectionsOfOnePrincipalShareItsPart) {
  for (int i = 0; i < 5; ++i) flow_->set_active(true, "bulk");
  flow_->set_active(true, "orders");
  // Two principals: half each. bulk's five connections split its half.
  EXPECT_EQ(flow_->fair_share(true, "bulk"), 120000U);
  EXPECT_EQ(flow_->fair_share(true, "orders"), 600000U);
  // A third principal's newcomer: a third for it, the others shrink.
  EXPECT_EQ(flow_->fair_share(false, "audit"), 400000U);
}

TEST_F(PrincipalShareTest, APrincipalGoingQuietGivesItsPartBack) {
  flow_->set_active(true, "bulk");
  flow_->set_active(true, "orders");
  EXPECT_EQ(flow_->fair_share(true, "orders"), 600000U);
  flow_->set_active(false, "bulk");
  EXPECT_EQ(flow_->fair_share(true, "orders"), 1200000U);
}

}  // namespace
}  // namespace pp
