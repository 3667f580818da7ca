// Idle partitions give up their state (upstream.metadata_max_idle_ms) but not
// their sequence: a broker still holding this producer's state for the
// partition would answer a restart at 0 OUT_OF_ORDER_SEQUENCE.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class IdleRetirementTest : public PipelineFixture {
 protected:
  // One run of `count` records to t-0, sent and acknowledged.
  void deliver(int count, std::int64_t offset) {
    const std::size_t slot = submit("t", 0, count);
    poll();
    auto sent = upstream.take_with("t", 0);
    ASSERT_EQ(sent.batches.size(), 1u);
    last_base_sequence = sent.batches[0].base_sequence;
    last_epoch = sent.batches[0].producer_epoch;
    ScriptedUpstream::answer(sent, [&](const SentBatch&) { return ok(offset); });
    poll();
    ASSERT_TRUE(results[slot].has_value());
    ASSERT_EQ(results[slot]->error, ErrorCode::kNone);
  }

  std::int32_t last_base_sequence = -1;
  std::int16_t last_epoch = -1;
};

TEST_F(IdleRetirementTest, ARetiredPartitionContinuesItsSequence) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  deliver(3, 0);
  EXPECT_EQ(last_base_sequence, 0);

  clock.advance(10000);
  EXPECT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 1u);
  EXPECT_EQ(producer->partition(TopicPartition{"t", 0}), nullptr) << "its state is freed";
  EXPECT_EQ(producer->sequence_memo_count(), 1u);
  EXPECT_TRUE(producer->topics_with_partitions().empty());

  deliver(2, 3);
  EXPECT_EQ(last_base_sequence, 3) << "the sequence goes on where it stopped, not at 0";
  EXPECT_EQ(last_epoch, 0) << "no epoch bump";
  EXPECT_EQ(producer->sequence_memo_count(), 0u) << "the memo is used up";
}

TEST_F(IdleRetirementTest, APartitionRecentlyUsedOrWithWorkLeftStays) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  deliver(1, 0);
  clock.advance(1000);
  EXPECT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 0u) << "used 1 s ago, the limit is 5 s";

  // Queued records and a batch in flight keep it however old its last use.
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  clock.advance(60000);
  EXPECT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 0u) << "a batch is in flight";
  EXPECT_NE(producer->partition(TopicPartition{"t", 0}), nullptr);
}

TEST_F(IdleRetirementTest, AMemoOfAnOlderEpochIsDroppedAndTheSequenceStartsOver) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  deliver(4, 0);
  clock.advance(10000);
  ASSERT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 1u);

  // t-1 fails non-retriably: the producer bumps its epoch.
  const std::size_t failed = submit("t", 1, 1);
  poll();
  auto sent = upstream.take_with("t", 1);
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kInvalidRecord); });
  poll();
  ASSERT_TRUE(results[failed].has_value());
  ASSERT_EQ(producer->identity().epoch.value, 1) << "the failed batch bumped the epoch";

  // t-0's memo belongs to epoch 0: the sweep drops it.
  ASSERT_EQ(producer->sequence_memo_count(), 1u);
  producer->retire_idle_partitions(clock.now_ms() - 60000);
  EXPECT_EQ(producer->sequence_memo_count(), 0u);
  deliver(1, 4);
  EXPECT_EQ(last_epoch, 1);
  EXPECT_EQ(last_base_sequence, 0) << "a new epoch starts every partition at 0";
}

TEST_F(IdleRetirementTest, MemosAreChargedToTheBudgetAndAnEpochChangeDropsThemPastASixteenth) {
  config.buffer_memory_bytes = 64 * 1024;  // a sixteenth is 4 KiB: some 30 memos
  start();
  constexpr int kPartitions = 60;
  producer->on_metadata(leaders("t", std::vector<std::pair<int, int>>(kPartitions, {1, 0})));
  const auto memo_bytes = [&] { return producer->memory_budget().used(MemoryUse::kSequenceMemos); };
  for (int i = 0; i < kPartitions; ++i) {
    submit("t", i, 1);
    poll();
    auto sent = upstream.take_with("t", i);
    ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(0); });
    poll();
  }
  clock.advance(10000);
  ASSERT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), static_cast<std::size_t>(kPartitions));
  ASSERT_EQ(producer->sequence_memo_count(), static_cast<std::size_t>(kPartitions));
  EXPECT_GT(memo_bytes(), 64U * 1024 / 16) << "60 memos cost more than a sixteenth of 64 KiB";

  poll();  // the epoch change the sweep asked for
  EXPECT_EQ(producer->identity().epoch.value, 1) << "memos past a sixteenth of the budget change the epoch";
  producer->retire_idle_partitions(clock.now_ms() - 5000);
  EXPECT_EQ(producer->sequence_memo_count(), 0u) << "the memos of epoch 0 are moot";
  EXPECT_EQ(memo_bytes(), 0u) << "and their charge is gone";

  deliver(1, 1);
  EXPECT_EQ(last_epoch, 1);
  EXPECT_EQ(last_base_sequence, 0);
}

TEST_F(IdleRetirementTest, AFewMemosAreChargedButChangeNoEpoch) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  deliver(3, 0);
  clock.advance(10000);
  ASSERT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 1u);
  EXPECT_GT(producer->memory_budget().used(MemoryUse::kSequenceMemos), 0u);
  poll();
  EXPECT_EQ(producer->identity().epoch.value, 0);
  deliver(1, 3);
  EXPECT_EQ(last_base_sequence, 3);
  EXPECT_EQ(producer->memory_budget().used(MemoryUse::kSequenceMemos), 0u) << "a used-up memo is no longer charged";
}

}  // namespace
}  // namespace pp::testing
