// HandshakePacer on a real loop: the ration per iteration, first come first
// served, waiters gone or closed skipped without a step, one pacer's ration
// apart from another's on the same loop, and a pacer destroyed with waiters
// (or from inside a waiter's turn) leaving nothing on the loop.
#include "proxy/net/handshake_pacer.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

// Records its turn in `order`.
struct TestWaiter final : HandshakePacer::Waiter {
  TestWaiter(int id_, std::vector<int>& order_) : id(id_), order(order_) {}
  bool wants_turn() const override { return open; }
  void take_turn() override {
    order.push_back(id);
    if (on_turn) on_turn();
  }
  int id;
  std::vector<int>& order;
  bool open = true;
  std::function<void()> on_turn;
};

class HandshakePacerTest : public LoopTest {
 protected:
  std::shared_ptr<TestWaiter> waiter(int id) { return std::make_shared<TestWaiter>(id, order_); }
  void one_iteration() { uv_run(&loop_, UV_RUN_NOWAIT); }

  std::vector<int> order_;
};

TEST_F(HandshakePacerTest, TakesTwoStepsPerIterationAndServesWaitersInOrder) {
  HandshakePacer pacer(&loop_);
  EXPECT_TRUE(pacer.try_take_step());
  EXPECT_TRUE(pacer.try_take_step());
  EXPECT_FALSE(pacer.try_take_step()) << "the iteration's ration is spent";
  std::vector<std::shared_ptr<TestWaiter>> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.push_back(waiter(i));
    pacer.wait(waiters.back());
  }
  EXPECT_TRUE(order_.empty()) << "a turn never runs inside wait()";
  EXPECT_FALSE(pacer.try_take_step()) << "others wait before the caller";
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{0, 1}));
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{0, 1, 2, 3}));
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pacer.waiting(), 0U);
  // The handle stopped with the queue empty: the loop has nothing to run.
  EXPECT_EQ(uv_loop_alive(&loop_), 0);
}

TEST_F(HandshakePacerTest, WaitersGoneOrClosedAreSkippedWithoutAStep) {
  HandshakePacer pacer(&loop_);
  EXPECT_TRUE(pacer.try_take_step());
  EXPECT_TRUE(pacer.try_take_step());
  auto gone = waiter(0);
  auto closed = waiter(1);
  auto second = waiter(2);
  auto third = waiter(3);
  for (const auto& w : {gone, closed, second, third}) pacer.wait(w);
  gone.reset();
  closed->open = false;
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{2, 3}));
}

TEST_F(HandshakePacerTest, EachListenersPacerKeepsItsOwnRation) {
  HandshakePacer first(&loop_);
  HandshakePacer second(&loop_);
  EXPECT_TRUE(first.try_take_step());
  EXPECT_TRUE(first.try_take_step());
  EXPECT_FALSE(first.try_take_step());
  EXPECT_TRUE(second.try_take_step()) << "a burst on one listener spends only its own ration";
  auto w = waiter(7);
  first.wait(w);
  EXPECT_FALSE(first.try_take_step());
  EXPECT_TRUE(second.try_take_step());
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{7}));
}

TEST_F(HandshakePacerTest, DestroyedWithWaitersTellsNoneAndLeavesNothingOnTheLoop) {
  auto w = waiter(1);
  {
    HandshakePacer pacer(&loop_);
    EXPECT_TRUE(pacer.try_take_step());
    EXPECT_TRUE(pacer.try_take_step());
    pacer.wait(w);
  }
  one_iteration();
  EXPECT_TRUE(order_.empty());
  // TearDown: uv_loop_close fails if the pacer's handle were left open.
}

TEST_F(HandshakePacerTest, MayBeDestroyedFromInsideAWaitersTurn) {
  std::optional<HandshakePacer> pacer;
  pacer.emplace(&loop_);
  EXPECT_TRUE(pacer->try_take_step());
  EXPECT_TRUE(pacer->try_take_step());
  auto first = waiter(1);
  auto second = waiter(2);
  first->on_turn = [&] { pacer.reset(); };
  pacer->wait(first);
  pacer->wait(second);
  one_iteration();
  EXPECT_EQ(order_, (std::vector<int>{1})) << "the queue went with the pacer";
}

}  // namespace
}  // namespace pp::net
