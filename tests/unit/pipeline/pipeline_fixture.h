// A producer wired to a ScriptedUpstream and a ManualClock.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/record_runs.h"
#include "tests/unit/pipeline/scripted_upstream.h"

namespace pp::testing {

// Counts epoch bumps and renumbered ambiguous batches by reason.
class CountingObserver final : public PipelineObserver {
 public:
  void on_ambiguous_renumbered(std::string_view reason, std::int64_t batches) override {
    ambiguous[std::string(reason)] += batches;
  }
  void on_epoch_bump(std::string_view reason) override { ++bumps[std::string(reason)]; }
  std::map<std::string, std::int64_t> ambiguous;
  std::map<std::string, std::int64_t> bumps;
};

class PipelineFixture : public ::testing::Test {
 public:
  void SetUp() override {
    config.linger_ms = 0;
    config.retry_backoff_ms = 10;
    config.retry_backoff_max_ms = 10;
    upstream.node_ready[1] = true;
    upstream.node_ready[2] = true;
  }

  void start(std::int64_t producer_id = 1000, std::int16_t epoch = 0) {
    producer = std::make_unique<IdempotentProducer>(config, upstream, clock, observer);
    producer->poll();
    ASSERT_EQ(upstream.init_requests.size(), 1u);
    upstream.grant_producer_id(producer_id, epoch);
    ASSERT_EQ(producer->identity_state(), IdentityState::kReady);
  }

  // Submits a run of `count` records ("<tag>-<i>") and returns where its result lands.
  std::size_t submit(const std::string& topic, std::int32_t partition, int count, std::string tag = "r") {
    auto storage = std::make_shared<std::vector<std::string>>();
    for (int i = 0; i < count; ++i) storage->push_back(tag + "-" + std::to_string(i));
    RecordRun run = run_of(std::move(storage));
    const std::size_t slot = results.size();
    results.emplace_back();
    producer->submit(topic, partition, std::move(run), [this, slot](const RunResult& r) {
      ASSERT_FALSE(results[slot].has_value()) << "a run completed twice";
      results[slot] = r;
    });
    return slot;
  }

  // Sends one record to `topic`-`partition` and acknowledges it at offset 0
  // with `window`: the partition is past its first batch of the epoch, so
  // its later batches are no longer held behind it.
  void ack_first_batch(const std::string& topic, std::int32_t partition, std::int32_t window = 5) {
    submit(topic, partition, 1);
    poll();
    auto first = upstream.take_with(topic, partition);
    ScriptedUpstream::answer(first, [window](const SentBatch&) { return ok(0, window); });
  }

  void poll() { producer->poll(); }
  const PartitionState& state(const std::string& topic, std::int32_t partition) {
    return *producer->partition(TopicPartition{topic, partition});
  }

  static PartitionAnswer ok(std::int64_t offset, std::int32_t window = 5) {
    PartitionAnswer a;
    a.base_offset = offset;
    a.window = window;
    return a;
  }
  static PartitionAnswer error(ErrorCode e) {
    PartitionAnswer a;
    a.error = e;
    return a;
  }

  ManualClock clock;
  ScriptedUpstream upstream;
  PipelineConfig config;
  PipelineObserver* observer = nullptr;  // set before start()
  std::unique_ptr<IdempotentProducer> producer;
  std::vector<std::optional<RunResult>> results;
};

}  // namespace pp::testing
