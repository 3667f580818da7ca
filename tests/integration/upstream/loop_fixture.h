// A libuv loop owned by a test, run until a condition holds or a guard timer
// fires, plus a sink that captures what the upstream layer logs.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <uv.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "proxy/net/timer.h"
#include "proxy/upstream/log.h"

namespace pp::upstream::test {

class CaptureSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  bool contains(const std::string& text) {
    std::lock_guard lock(mutex_);
    return std::any_of(lines_.begin(), lines_.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
  std::size_t count(const std::string& text) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(
        lines_.begin(), lines_.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; }));
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    // "warning: broker 1 (...): ..." so tests can check the level too.
    const auto level = spdlog::level::to_string_view(msg.level);
    lines_.push_back(std::string(level.data(), level.size()) + ": " +
                     std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

class LoopTest : public ::testing::Test {
 protected:
  LoopTest() {
    uv_loop_init(&loop_);
    capture_ = std::make_shared<CaptureSink>();
    // Debug lines reach the capture; the console keeps to info and above.
    for (auto& sink : log().sinks()) sink->set_level(spdlog::level::info);
    log().sinks().push_back(capture_);
    log().set_level(spdlog::level::debug);
  }
  ~LoopTest() override {
    auto& sinks = log().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), capture_), sinks.end());
    // Owners of handles must be gone by now (release() in TearDown); what they
    // closed is freed by running the loop once more.
    for (int i = 0; i < 10 && uv_loop_alive(&loop_); ++i) uv_run(&loop_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a libuv handle outlived its test";
  }

  // Runs the loop until `done()` holds; false if `timeout_ms` passed first.
  bool run_until(const std::function<bool()>& done, std::uint64_t timeout_ms) {
    bool expired = false;
    net::Timer guard(&loop_);
    guard.start(timeout_ms, 0, [&] { expired = true; });
    // Wakes the loop now and then, for conditions set by other threads.
    net::Timer tick(&loop_);
    tick.start(10, 10, [] {});
    while (!done() && !expired) uv_run(&loop_, UV_RUN_ONCE);
    return done();
  }
  void run_for(std::uint64_t ms) {
    run_until([] { return false; }, ms);
  }

  uv_loop_t loop_{};
  std::shared_ptr<CaptureSink> capture_;
};

}  // namespace pp::upstream::test
