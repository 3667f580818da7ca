#include "proxy/net/deferred.h"

#include <functional>
#include <optional>
#include <vector>

#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

using DeferredTest = LoopTest;

TEST_F(DeferredTest, RunsLaterInTheOrderPosted) {
  Deferred deferred(&loop_);
  std::vector<int> ran;
  deferred.post([&] { ran.push_back(1); });
  deferred.post([&] { ran.push_back(2); });
  EXPECT_TRUE(ran.empty()) << "ran inside post";
  EXPECT_EQ(deferred.pending(), 2u);
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  EXPECT_EQ(deferred.pending(), 0u);
}

// The queue's storage is reused from pass to pass: what a callback posts
// must neither run in the same pass nor be lost with the reused storage.
TEST_F(DeferredTest, WhatACallbackPostsRunsOnTheNextPassEveryPass) {
  Deferred deferred(&loop_);
  std::vector<int> ran;
  constexpr int kPasses = 50;
  std::function<void(int)> chain = [&](int pass) {
    ran.push_back(pass);
    if (pass + 1 < kPasses) {
      deferred.post([&ran] { ran.push_back(-1); });
      deferred.post([&chain, pass] { chain(pass + 1); });
    }
  };
  deferred.post([&] { chain(0); });
  for (int pass = 0; pass < kPasses; ++pass) {
    uv_run(&loop_, UV_RUN_NOWAIT);
    ASSERT_EQ(ran.size(), static_cast<std::size_t>(pass == 0 ? 1 : 2 * pass + 1)) << "pass " << pass;
    EXPECT_EQ(ran.back(), pass);
  }
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_EQ(ran.size(), static_cast<std::size_t>(2 * kPasses - 1));
  EXPECT_EQ(deferred.pending(), 0u);
}

TEST_F(DeferredTest, CancelDropsWhatIsQueued) {
  Deferred deferred(&loop_);
  bool ran = false;
  deferred.post([&] { ran = true; });
  deferred.cancel();
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_FALSE(ran);
}

// An owner destroyed by its own callback: the rest of the pass still runs,
// later posts do not, and the handle is freed (LoopTest checks it closed).
TEST_F(DeferredTest, AnOwnerDestroyedByItsCallbackFinishesThePass) {
  std::optional<Deferred> deferred(std::in_place, &loop_);
  std::vector<int> ran;
  deferred->post([&] {
    ran.push_back(1);
    deferred.reset();
  });
  deferred->post([&] { ran.push_back(2); });
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace pp::net
