// The first-ack rule, ordered retries, epoch bumps and sequence assignment.
#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class OrderingTest : public PipelineFixture {};

TEST_F(OrderingTest, SequencesAreAssignedAtFirstSendNotAtEnqueue) {
  start();
  submit("t", 0, 3);
  // No metadata yet: nothing can be sent, and no sequence is used.
  poll();
  EXPECT_EQ(upstream.outstanding.size(), 0u);
  EXPECT_TRUE(upstream.metadata_requested.contains("t"));
  producer->on_metadata(leaders("t", {{1, 0}}));
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const SentBatch& b = upstream.outstanding.front().batches[0];
  EXPECT_EQ(b.producer_id, 1000);
  EXPECT_EQ(b.producer_epoch, 0);
  EXPECT_EQ(b.base_sequence, 0);
  EXPECT_EQ(b.record_count, 3);
  EXPECT_EQ(state("t", 0).next_sequence(), 3);
}

TEST_F(OrderingTest, FirstAckRuleHoldsTheSecondBatchButNotOtherPartitions) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  submit("t", 0, 1, "a");
  poll();
  submit("t", 0, 1, "b");
  submit("t", 1, 1, "c");
  poll();
  // t-0's second batch waits for the first; t-1 flows.
  ASSERT_EQ(upstream.outstanding.size(), 2u);
  EXPECT_EQ(upstream.outstanding[1].batches.size(), 1u);
  EXPECT_EQ(upstream.outstanding[1].batches[0].tp.partition, 1);
  EXPECT_EQ(state("t", 0).new_batch_hold(producer->identity()), HoldReason::kFirstUnacked);
  // No busy loop: the held partition has no timed work.
  EXPECT_EQ(producer->next_wakeup_ms(), clock.now_ms() + config.delivery_timeout_ms)
      << "only the delivery timeout remains";

  // The first batch fails NOT_LEADER_OR_FOLLOWER twice; the second stays unsent.
  for (int i = 0; i < 2; ++i) {
    auto s = upstream.take_with("t", 0);
    ASSERT_EQ(s.batches.size(), 1u);
    EXPECT_EQ(s.batches[0].base_sequence, 0);
    ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kNotLeaderOrFollower); });
    clock.advance(config.retry_backoff_ms);
    poll();
    for (const auto& o : upstream.outstanding) {
      for (const auto& b : o.batches) {
        if (b.tp.partition == 0) {
          EXPECT_EQ(b.base_sequence, 0) << "nothing after seq 0 before its ack";
        }
      }
    }
  }
  auto retry = upstream.take_with("t", 0);
  ASSERT_EQ(retry.batches[0].base_sequence, 0);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(40); });
  poll();
  auto second = upstream.take_with("t", 0);
  ASSERT_EQ(second.batches.size(), 1u);
  EXPECT_EQ(second.batches[0].base_sequence, 1);
  ScriptedUpstream::answer(second, [](const SentBatch&) { return ok(41); });
  poll();
  ASSERT_TRUE(results[0] && results[1]);
  EXPECT_EQ(results[0]->base_offset, 40);
  EXPECT_EQ(results[1]->base_offset, 41);
}

TEST_F(OrderingTest, RetriesGoInSequenceOrderAndLaterOnesWaitWithoutABump) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  ack_first_batch("t", 0);
  for (int i = 0; i < 3; ++i) {
    submit("t", 0, 2);
    poll();
  }
  ASSERT_EQ(upstream.outstanding.size(), 3u);  // seqs 1, 3, 5
  // Seq 1 times out; 3 and 5 get OUT_OF_ORDER (their predecessor is missing).
  auto s1 = upstream.take();
  auto s3 = upstream.take();
  auto s5 = upstream.take();
  ScriptedUpstream::fail(s1, ErrorCode::kRequestTimedOut);
  ScriptedUpstream::answer(s3, [](const SentBatch&) { return error(ErrorCode::kOutOfOrderSequenceNumber); });
  ScriptedUpstream::answer(s5, [](const SentBatch&) { return error(ErrorCode::kOutOfOrderSequenceNumber); });
  clock.advance(config.retry_backoff_ms);
  poll();
  EXPECT_EQ(producer->identity().epoch.value, 0) << "a non-head OOOSN must not bump (librdkafka #4953)";
  std::vector<std::int32_t> order;
  std::int64_t offset = 1;
  while (!upstream.outstanding.empty()) {
    ASSERT_EQ(upstream.outstanding.size(), 1u) << "one retry at a time";
    auto s = upstream.take();
    order.push_back(s.batches[0].base_sequence);
    EXPECT_EQ(s.batches[0].producer_epoch, 0);
    ScriptedUpstream::answer(s, [&](const SentBatch& b) {
      auto a = ok(offset);
      offset += b.record_count;
      return a;
    });
    poll();
  }
  EXPECT_EQ(order, (std::vector<std::int32_t>{1, 3, 5}));
  for (std::size_t i = 1; i < 4; ++i) ASSERT_TRUE(results[i].has_value());
  EXPECT_EQ(results[1]->base_offset, 1);
  EXPECT_EQ(results[3]->base_offset, 5);
}

TEST_F(OrderingTest, FailedBatchBumpsTheEpochAndRenumbersTheLaterOnesAfterTheyDrain) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  submit("t", 0, 1);
  submit("t", 1, 1);
  poll();
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch& b) { return ok(b.tp.partition * 100); });
  submit("t", 0, 2, "x");  // seq 1-2
  poll();
  submit("t", 0, 2, "y");  // seq 3-4
  submit("t", 1, 1, "z");  // t-1 seq 1, in flight during the bump
  poll();
  auto x = upstream.take();
  auto y = upstream.take();
  ASSERT_EQ(y.batches.size(), 2u);
  // x is rejected for good; y arrives after a gap.
  ScriptedUpstream::answer(x, [](const SentBatch&) { return error(ErrorCode::kInvalidRecord); });
  ScriptedUpstream::answer(y, [](const SentBatch& b) {
    return b.tp.partition == 0 ? error(ErrorCode::kOutOfOrderSequenceNumber) : ok(101);
  });
  ASSERT_TRUE(results[2].has_value());
  EXPECT_EQ(results[2]->error, ErrorCode::kInvalidRecord);
  poll();
  EXPECT_EQ(producer->identity().epoch.value, 1);
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const SentBatch& renumbered = upstream.outstanding.front().batches[0];
  EXPECT_EQ(renumbered.producer_epoch, 1);
  EXPECT_EQ(renumbered.base_sequence, 0);
  // The bytes were re-stamped in place, CRC included, records untouched.
  auto view = decode_record_batch(renumbered.bytes);
  ASSERT_TRUE(view.has_value()) << view.error().describe();
  ASSERT_EQ(view->records().size(), 2u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view->records()[0].value->data()), 3), "y-0");
  auto r = upstream.take();
  ScriptedUpstream::answer(r, [](const SentBatch&) { return ok(7); });
  // t-1 was not in the rewrite set: its next batch restarts at seq 0 of epoch 1.
  submit("t", 1, 1, "w");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].producer_epoch, 1);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 0);
}

TEST_F(OrderingTest, DuplicateSequenceNumberIsSuccess) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  auto s = upstream.take();
  ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kDuplicateSequenceNumber); });
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(results[0]->error, ErrorCode::kNone);
  EXPECT_EQ(results[0]->base_offset, -1);
}

TEST_F(OrderingTest, ClusterAuthorizationFailureIsFatal) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  submit("t", 0, 1);
  auto s = upstream.take();
  ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kClusterAuthorizationFailed); });
  EXPECT_EQ(producer->identity_state(), IdentityState::kFatal);
  poll();
  ASSERT_TRUE(results[0] && results[1]);
  EXPECT_EQ(results[0]->error, ErrorCode::kClusterAuthorizationFailed);
  EXPECT_EQ(results[1]->error, ErrorCode::kClusterAuthorizationFailed);
  EXPECT_TRUE(producer->idle());
}

TEST_F(OrderingTest, ExhaustedEpochGetsANewProducerId) {
  start(1000, INT16_MAX);
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  auto s = upstream.take();
  ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kInvalidRecord); });
  poll();
  ASSERT_EQ(upstream.init_requests.size(), 1u) << "epoch 32767 cannot be bumped: new id";
  upstream.grant_producer_id(2000, 0);
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].producer_id, 2000);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 0);
}

TEST_F(OrderingTest, RunsShareABatchAndEachGetsItsOwnOffset) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 3);
  submit("t", 0, 2);
  submit("t", 0, 4);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].record_count, 9);
  auto s = upstream.take();
  ScriptedUpstream::answer(s, [](const SentBatch&) { return ok(500); });
  EXPECT_EQ(results[0]->base_offset, 500);
  EXPECT_EQ(results[1]->base_offset, 503);
  EXPECT_EQ(results[2]->base_offset, 505);
}

TEST_F(OrderingTest, ARunLargerThanABatchSpansBatchesAndOthersStayWhole) {
  config.batch_bytes = 300;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 2, "small");
  submit("t", 0, 40, "big-run-of-many-records");
  poll();
  // The small run goes alone: the big one does not fit whole behind it.
  auto s = upstream.take();
  EXPECT_EQ(s.batches[0].record_count, 2);
  ScriptedUpstream::answer(s, [](const SentBatch&) { return ok(0); });
  std::int64_t offset = 2;
  int batches = 0;
  for (int guard = 0; guard < 50 && !results[1]; ++guard) {
    poll();
    if (upstream.outstanding.empty()) break;
    auto b = upstream.take();
    EXPECT_LE(b.batches[0].bytes.size(), 300u + 100u);
    ++batches;
    ScriptedUpstream::answer(b, [&](const SentBatch& sb) {
      auto a = ok(offset);
      offset += sb.record_count;
      return a;
    });
  }
  ASSERT_TRUE(results[1].has_value());
  EXPECT_GT(batches, 1);
  EXPECT_EQ(results[1]->base_offset, 2);
  EXPECT_EQ(offset, 42);
}

TEST_F(OrderingTest, MessageTooLargeSplitsAndKeepsTheSequenceRange) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 4);
  poll();
  auto s = upstream.take();
  ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kMessageTooLarge); });
  poll();
  auto a = upstream.take();
  EXPECT_EQ(a.batches[0].base_sequence, 0);
  EXPECT_EQ(a.batches[0].record_count, 2);
  ScriptedUpstream::answer(a, [](const SentBatch&) { return ok(10); });
  poll();
  auto b = upstream.take();
  EXPECT_EQ(b.batches[0].base_sequence, 2);
  EXPECT_EQ(b.batches[0].record_count, 2);
  ScriptedUpstream::answer(b, [](const SentBatch&) { return ok(12); });
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(results[0]->error, ErrorCode::kNone);
  EXPECT_EQ(results[0]->base_offset, 10);
}

}  // namespace
}  // namespace pp::testing
