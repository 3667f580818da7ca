// net::ChildProcess on a real loop: real children (sh, sleep), bounded by
// their timeouts; the loop keeps running timers while a child runs.
#include "proxy/net/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>

#include "proxy/net/timer.h"
#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

using Outcome = std::expected<std::string, std::string>;

// Alive and not a zombie waiting for its (re)parent to reap it; polls a
// little, as a SIGKILLed process takes a moment to become a zombie.
bool alive(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (!(stat >> pid_field >> comm >> state) || state == "Z" || state == "X") return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ChildProcessTest : public LoopTest {
 protected:
  // Runs argv to its end (the loop ends when nothing is left to do).
  Outcome run(const std::vector<std::string>& argv, int timeout_ms = 5000, std::size_t max_output = 1024) {
    std::optional<Outcome> got;
    ChildProcess child;
    child.start(&loop_, argv, timeout_ms, max_output, [&](Outcome o) { got = std::move(o); });
    EXPECT_TRUE(child.running());
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_FALSE(child.running());
    EXPECT_TRUE(got.has_value()) << "done was not called";
    return got.value_or(std::unexpected(std::string("no outcome")));
  }
};

TEST_F(ChildProcessTest, CollectsStdoutOfACommandThatExitsZero) {
  EXPECT_EQ(run({"printf", "a b"}).value(), "a b");
  EXPECT_EQ(run({"sh", "-c", "head -c 70000 /dev/zero | tr '\\0' x"}, 5000, 100000).value().size(), 70000U);
}

TEST_F(ChildProcessTest, FailuresSayWhatHappenedButNeverTheOutput) {
  auto missing = run({"/nonexistent/helper"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("cannot start"), std::string::npos) << missing.error();
  auto status = run({"sh", "-c", "echo secret-output; exit 3"});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error(), "exited with status 3");
  auto signalled = run({"sh", "-c", "kill -TERM $$"});
  ASSERT_FALSE(signalled);
  EXPECT_EQ(signalled.error(), "killed by signal 15");
  auto big = run({"sh", "-c", "head -c 5000 /dev/zero"}, 5000, 1024);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error(), "printed more than 1 KiB");
  auto empty = run({});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().find("cannot start"), std::string::npos);
}

TEST_F(ChildProcessTest, ATimeoutEndsItEvenWhileAGrandchildHoldsItsOutputOpen) {
  // The background sleep keeps stdout open after sh is killed: EOF comes only
  // when it exits, 20 s later. The outcome must not wait for that.
  const auto start = std::chrono::steady_clock::now();
  const std::string pid_file = ::testing::TempDir() + "child_process_grandchild.pid";
  std::remove(pid_file.c_str());
  auto outcome = run({"sh", "-c", "sleep 20 & echo $! > " + pid_file + "; sleep 20"}, 500);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error(), "timed out after 500 ms; killed");
  EXPECT_LT(took, std::chrono::seconds(5));
  // The background sleep went with it: killed as one process group.
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild) << "sh did not write the background pid";
  EXPECT_FALSE(alive(grandchild)) << "the grandchild " << grandchild << " outlived the timeout";
  if (alive(grandchild)) ::kill(grandchild, SIGKILL);
}

TEST_F(ChildProcessTest, KilledAtTheTimeoutWhileTheLoopRunsOn) {
  // A timer every 10 ms keeps firing while the child sleeps: the loop is not
  // blocked, and the longest gap between ticks shows it.
  Timer ticker(&loop_);
  auto last = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration longest{};
  int ticks = 0;
  ticker.start(10, 10, [&] {
    const auto now = std::chrono::steady_clock::now();
    longest = std::max(longest, now - last);
    last = now;
    ++ticks;
  });
  std::optional<Outcome> got;
  ChildProcess child;
  const auto start = std::chrono::steady_clock::now();
  child.start(&loop_, {"sleep", "5"}, 300, 1024, [&](Outcome o) {
    got = std::move(o);
    ticker.stop();
  });
  for (int i = 0; i < 1000 && !got; ++i) uv_run(&loop_, UV_RUN_ONCE);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(*got);
  EXPECT_EQ(got->error(), "timed out after 300 ms; killed");
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_GE(ticks, 10);
  EXPECT_LT(longest, std::chrono::milliseconds(150));
}

TEST_F(ChildProcessTest, StoppedChildIsKilledAndDoneNeverCalled) {
  bool called = false;
  const auto start = std::chrono::steady_clock::now();
  {
    ChildProcess child;
    child.start(&loop_, {"sleep", "5"}, 10000, 1024, [&](Outcome) { called = true; });
    for (int i = 0; i < 3; ++i) uv_run(&loop_, UV_RUN_NOWAIT);
  }  // destroyed: killed and reaped here
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_FALSE(called);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace pp::net
