// C.4 rule 8, adaptive batching: linger_ms bounds the wait, it is not a
// fixed delay. An idle partition sends at once; one with a batch in flight
// gathers records until the answer, a full batch or the linger bound.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class AdaptiveBatchingTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    config.linger_ms = 50;
  }

  // Sends and acknowledges the epoch's first batch, so the first-ack rule
  // (C.4 rule 3c) no longer holds the partition.
  void settle_first_batch() {
    submit("t", 0, 1, "first");
    poll();
    ASSERT_EQ(upstream.outstanding.size(), 1u) << "an idle partition sends at once";
    auto first = upstream.take();
    ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0); });
    ASSERT_EQ(state("t", 0).inflight_batches(), 0);
  }

  std::int32_t records_in_flight() const {
    std::int32_t n = 0;
    for (const auto& s : upstream.outstanding)
      for (const auto& b : s.batches) n += b.record_count;
    return n;
  }
};

TEST_F(AdaptiveBatchingTest, IdlePartitionsFirstRecordGoesWithoutWaitingForLinger) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();  // the clock has not moved: no linger has passed
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches.at(0).record_count, 1);
  EXPECT_NE(producer->next_wakeup_ms(), clock.now_ms()) << "nothing left that is due now";
}

TEST_F(AdaptiveBatchingTest, BatchInFlightGathersRecordsUntilItsAnswer) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  settle_first_batch();

  submit("t", 0, 1, "a");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u) << "nothing in flight: the record goes at once";
  for (int i = 0; i < 3; ++i) submit("t", 0, 1, "b" + std::to_string(i));
  poll();
  clock.advance(config.linger_ms - 1);
  poll();
  EXPECT_EQ(upstream.outstanding.size(), 1u) << "a batch is in flight and the linger bound is not reached";
  EXPECT_EQ(state("t", 0).queued_runs().size(), 3u);

  auto a = upstream.take();
  ScriptedUpstream::answer(a, [](const SentBatch&) { return ok(1); });
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u) << "the answer releases what gathered behind it";
  ASSERT_EQ(upstream.outstanding.front().batches.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].record_count, 3) << "three runs, one batch";
}

TEST_F(AdaptiveBatchingTest, LingerBoundsTheWaitBehindABatchInFlight) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  settle_first_batch();

  submit("t", 0, 1, "a");
  poll();
  submit("t", 0, 1, "b");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(producer->next_wakeup_ms(), clock.now_ms() + config.linger_ms) << "the bound is a timer";
  clock.advance(config.linger_ms);
  poll();
  EXPECT_EQ(upstream.outstanding.size(), 2u) << "linger passed: the second batch goes with the first in flight";
  EXPECT_EQ(state("t", 0).inflight_batches(), 2);
}

TEST_F(AdaptiveBatchingTest, FullBatchGoesAtOnceEvenWithABatchInFlight) {
  config.batch_bytes = 300;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  settle_first_batch();

  submit("t", 0, 1, "a");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  submit("t", 0, 40, "full");  // 40 small records are more than 300 bytes
  ASSERT_GE(state("t", 0).queued_estimate_bytes(), config.batch_bytes);
  poll();
  EXPECT_GE(upstream.outstanding.size(), 2u) << "a full batch does not wait for the answer or for linger";
  EXPECT_GT(records_in_flight(), 1);
}

TEST_F(AdaptiveBatchingTest, RecordsOfOneIterationShareABatch) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  settle_first_batch();

  // Submitted between two polls (one event-loop iteration in the daemon).
  for (int i = 0; i < 4; ++i) submit("t", 0, 1, "c" + std::to_string(i));
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches.at(0).record_count, 4);
}

}  // namespace
}  // namespace pp::testing
