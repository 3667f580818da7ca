// The real pipeline (Upstream + IdempotentProducer, driven on a libuv loop)
// against a real broker over loopback: the KIP-1269 test cluster or
// librdkafka's mock cluster.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/producer_driver.h"
#include "proxy/net/timer.h"
#include "tests/support/record_runs.h"

namespace pp::testing {

class DriverFixture : public ::testing::Test {
 public:
  DriverFixture() { uv_loop_init(&loop_); }
  ~DriverFixture() override {
    if (driver_) {
      driver_->close();
      uv_run(&loop_, UV_RUN_NOWAIT);
      driver_.reset();
    }
    for (int i = 0; i < 10 && uv_run(&loop_, UV_RUN_NOWAIT) != 0; ++i) {
    }
    uv_loop_close(&loop_);
  }

  void start_driver(const std::string& bootstrap, PipelineConfig pipeline, int max_in_flight = 32,
                    PipelineObserver* observer = nullptr) {
    upstream::UpstreamConfig up;
    std::size_t at = 0;
    while (at < bootstrap.size()) {
      const std::size_t comma = bootstrap.find(',', at);
      up.bootstrap_servers.push_back(bootstrap.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    up.max_in_flight_per_connection = max_in_flight;
    up.request_timeout_ms = 5000;
    driver_ = std::make_unique<ProducerDriver>(&loop_, up, pipeline, observer);
    auto started = driver_->start();
    ASSERT_TRUE(started.has_value()) << started.error();
  }

  // Runs the loop until `done()` or `timeout_ms` passes; false on timeout.
  bool run_until(const std::function<bool()>& done, std::uint64_t timeout_ms) {
    bool timed_out = false;
    net::Timer guard(&loop_);
    guard.start(timeout_ms, 0, [&] { timed_out = true; });
    net::Timer tick(&loop_);
    tick.start(20, 20, [] {});  // keeps the loop turning so `done` is re-checked
    while (!done() && !timed_out) uv_run(&loop_, UV_RUN_ONCE);
    return !timed_out;
  }

  // Submits `count` records "<topic>-<partition>-<seq>" as one run.
  void submit(const std::string& topic, std::int32_t partition, int count, std::size_t value_bytes = 100) {
    auto storage = std::make_shared<std::vector<std::string>>();
    auto& next = next_seq_[{topic, partition}];
    for (int i = 0; i < count; ++i) {
      std::string v = topic + "-" + std::to_string(partition) + "-" + std::to_string(next++);
      v.resize(std::max(value_bytes, v.size()), '.');
      expected_[{topic, partition}].push_back(v);
      storage->push_back(std::move(v));
    }
    RecordRun run = run_of(std::move(storage));
    ++submitted_;
    driver_->producer().submit(topic, partition, std::move(run), [this](const RunResult& r) {
      ++completed_;
      if (r.error != ErrorCode::kNone) {
        ++failed_;
        last_error_ = std::string(error_name(r.error)) + ": " + r.error_message;
      }
    });
  }

  bool all_completed() const { return completed_ == submitted_; }

  uv_loop_t loop_{};
  std::unique_ptr<ProducerDriver> driver_;
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> next_seq_;
  std::map<std::pair<std::string, std::int32_t>, std::vector<std::string>> expected_;
  std::int64_t submitted_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t failed_ = 0;
  std::string last_error_;
};

}  // namespace pp::testing
