// Shared by the durable layer's tests: a real libuv loop, a real SpoolWriter
// over a fresh temporary directory, and the real IdempotentProducer behind a
// scripted upstream (the pipeline tests' ScriptedUpstream) under a manual
// clock, so a test answers each upstream request as it likes.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proxy/spool/spool_recovery.h"
#include "proxy/spool/spool_writer.h"
#include "tests/support/record_runs.h"
#include "tests/unit/pipeline/scripted_upstream.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp::durable::testing {

class DurableHarness {
 public:
  explicit DurableHarness(const std::string& dir, spool::SpoolWriterConfig writer_config = {},
                          std::size_t buffer_memory_bytes = 32U << 20) {
    uv_loop_init(&loop_);
    config_.linger_ms = 0;
    config_.retry_backoff_ms = 10;
    config_.retry_backoff_max_ms = 10;
    config_.buffer_memory_bytes = buffer_memory_bytes;
    upstream_.node_ready[1] = true;
    auto recovered = spool::SpoolRecovery(dir, spool::SpoolRecovery::Mode::kRepair).run();
    EXPECT_TRUE(recovered) << recovered.error();
    if (recovered) writer_.emplace(&loop_, writer_config, std::move(*recovered), nullptr);
    producer_ = std::make_unique<IdempotentProducer>(config_, upstream_, clock_);
  }
  ~DurableHarness() {
    if (writer_) {
      bool closed = false;
      writer_->close([&] { closed = true; });
      spin([&] { return closed; });
    }
    producer_.reset();
    writer_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }
  DurableHarness(const DurableHarness&) = delete;
  DurableHarness& operator=(const DurableHarness&) = delete;

  // The producer id granted and topic `t` led by node 1.
  void start_producer(const std::vector<std::string>& topics = {"t"}) {
    producer_->poll();
    ASSERT_EQ(upstream_.init_requests.size(), 1U);
    upstream_.grant_producer_id(1000, 0);
    for (const auto& t : topics) producer_->on_metadata(pp::testing::leaders(t, {{1, 0}}));
  }

  // Turns the loop until `done()`, for at most `limit` (a test that waits in
  // vain fails on its own expectations, it does not hang). Commits finish on
  // the threadpool, after an fdatasync: the wait is in time, not in turns.
  template <class F>
  void spin(F done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < until) {
      if (uv_run(&loop_, UV_RUN_NOWAIT) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!done()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  uv_loop_t* loop() { return &loop_; }
  spool::SpoolWriter& writer() { return *writer_; }
  IdempotentProducer& producer() { return *producer_; }
  pp::testing::ScriptedUpstream& upstream() { return upstream_; }

 private:
  uv_loop_t loop_{};
  PipelineConfig config_;
  pp::testing::ScriptedUpstream upstream_;
  ManualClock clock_;
  std::optional<spool::SpoolWriter> writer_;
  std::unique_ptr<IdempotentProducer> producer_;
};

// A run of `count` records valued "<tag>-<i>".
inline RecordRun values_run(const std::string& tag, int count) {
  auto values = std::make_shared<std::vector<std::string>>();
  for (int i = 0; i < count; ++i) values->push_back(tag + "-" + std::to_string(i));
  return pp::testing::run_of(std::move(values));
}

// The values of every record of an upstream batch, in order.
inline std::vector<std::string> values_of(const pp::testing::SentBatch& b) {
  std::vector<std::string> out;
  auto view = decode_record_batch(b.bytes);
  EXPECT_TRUE(view);
  if (!view) return out;
  for (const auto& r : view->records()) out.emplace_back(r.value->begin(), r.value->end());
  return out;
}

// Polls the producer and answers what it sends to `topic`-0, each batch at
// the next offsets from `first_offset`, until `want` values went out (at
// most 200 rounds of 5 s). The values, in the order they were sent.
inline std::vector<std::string> deliver(DurableHarness& h, std::size_t want, const std::string& topic = "t",
                                        std::int64_t first_offset = 0) {
  std::vector<std::string> delivered;
  std::int64_t offset = first_offset;
  for (int round = 0; round < 200 && delivered.size() < want; ++round) {
    h.spin(
        [&] {
          h.producer().poll();
          return !h.upstream().outstanding.empty();
        },
        std::chrono::seconds(5));
    while (!h.upstream().outstanding.empty()) {
      auto sent = h.upstream().take_with(topic, 0);
      for (const auto& b : sent.batches) {
        for (const auto& v : values_of(b)) delivered.push_back(v);
      }
      pp::testing::ScriptedUpstream::answer(sent, [&](const auto& b) {
        pp::testing::PartitionAnswer ok;
        ok.base_offset = offset;
        offset += b.record_count;
        return ok;
      });
    }
  }
  return delivered;
}

}  // namespace pp::durable::testing
