// A real libuv loop per test; TearDown fails the test if a handle was left
// open (everything a test starts must be closed by it).
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

namespace pp::net {

class LoopTest : public ::testing::Test {
 protected:
  void SetUp() override { uv_loop_init(&loop_); }
  void TearDown() override {
    uv_run(&loop_, UV_RUN_DEFAULT);  // let close callbacks free everything
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open";
  }
  uv_loop_t loop_{};
};

}  // namespace pp::net
