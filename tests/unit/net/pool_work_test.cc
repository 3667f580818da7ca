// Work on libuv's thread pool: it runs off the loop thread, its continuation
// on it, and the request frees itself once the continuation ran.
#include "proxy/net/pool_work.h"

#include <atomic>
#include <memory>
#include <thread>

#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

using PoolWorkTest = LoopTest;

TEST_F(PoolWorkTest, WorkOffTheLoopThreadContinuationOnIt) {
  const std::thread::id loop_thread = std::this_thread::get_id();
  std::thread::id work_thread;
  std::thread::id done_thread;
  bool ran = false;
  auto held = std::make_shared<int>(7);
  ASSERT_TRUE(queue_work(
      &loop_, [&, held] { work_thread = std::this_thread::get_id(); },
      [&, held](bool r) {
        ran = r;
        done_thread = std::this_thread::get_id();
      }));
  EXPECT_FALSE(ran) << "the continuation ran inside queue_work";
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_TRUE(ran);
  EXPECT_NE(work_thread, loop_thread);
  EXPECT_EQ(done_thread, loop_thread);
  EXPECT_EQ(held.use_count(), 1) << "the request's functions were not freed";
}

TEST_F(PoolWorkTest, ManyRequestsAllComplete) {
  std::atomic<int> worked{0};
  int done = 0;
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(queue_work(
        &loop_, [&] { ++worked; }, [&](bool r) { done += r ? 1 : 0; }));
  }
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_EQ(worked.load(), 64);
  EXPECT_EQ(done, 64);
}

}  // namespace
}  // namespace pp::net
