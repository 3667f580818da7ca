// KIP-1269: windows learned from the ProduceResponse, the two-level in-flight
// check, and the reset to 5 on a leader change.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

// Every window test runs under each placement of the window in the v14
// answer (KIP-1269 as first proposed, as revised, and both at once).
class WindowTest : public PipelineFixture, public ::testing::WithParamInterface<WindowPlacement> {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    ScriptedUpstream::window_placement = GetParam();
  }
  void TearDown() override { ScriptedUpstream::window_placement = WindowPlacement::kPartition; }
};

// Sends one batch per poll until the producer holds the partition.
int send_until_held(PipelineFixture& f, const std::string& topic, int max_batches) {
  const std::int64_t before = f.upstream.produce_requests_sent;
  for (int i = 0; i < max_batches; ++i) {
    f.submit(topic, 0, 1);
    f.poll();
  }
  return static_cast<int>(f.upstream.produce_requests_sent - before);
}

TEST_P(WindowTest, StartsAtFiveAndLearnsTwentyFromTheFirstV14Response) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(state("t", 0).window(), 5);
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0, 20); });
  EXPECT_EQ(state("t", 0).window(), 20);

  // Now 20 batches may be in flight at once, and not 21.
  EXPECT_EQ(send_until_held(*this, "t", 30), 20);
  EXPECT_EQ(state("t", 0).inflight_batches(), 20);
  EXPECT_EQ(state("t", 0).new_batch_hold(producer->identity()), HoldReason::kWindowCount);
}

TEST_P(WindowTest, AbsentTagOrOlderVersionMeansFive) {
  config.max_partition_window = 50;
  start();
  upstream.node_version[1] = 13;
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  auto first = upstream.take();
  EXPECT_EQ(first.version, 13);
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0, 20); });
  EXPECT_EQ(state("t", 0).window(), 5);
  EXPECT_EQ(send_until_held(*this, "t", 10), 5);
}

TEST_P(WindowTest, LearnedWindowIsCappedByMaxPartitionWindow) {
  config.max_partition_window = 8;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  ack_first_batch("t", 0, 1000);
  EXPECT_EQ(state("t", 0).window(), 8);
}

TEST_P(WindowTest, PerConnectionCapLimitsAcrossPartitions) {
  upstream.max_in_flight_per_connection = 3;
  start();
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  submit("t", 0, 1);
  submit("t", 1, 1);
  poll();
  ASSERT_EQ(upstream.inflight(1), 1) << "one request, one batch per partition";
  auto first = upstream.take();
  EXPECT_EQ(first.batches.size(), 2u);
  std::int64_t offset = 0;
  ScriptedUpstream::answer(first, [&](const SentBatch&) { return ok(offset++, 20); });
  for (int i = 0; i < 6; ++i) {
    submit("t", 0, 1);
    submit("t", 1, 1);
    poll();
  }
  EXPECT_EQ(upstream.inflight(1), 3) << "level 2: the connection cap, not the window of 20";
  EXPECT_EQ(state("t", 0).inflight_batches(), 3);
}

TEST_P(WindowTest, LeaderChangeResetsToFiveAndDrainsTheOldLeaderFirst) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  ack_first_batch("t", 0, 20);
  ASSERT_EQ(send_until_held(*this, "t", 8), 8);

  producer->on_metadata(leaders("t", {{2, 1}}));
  EXPECT_EQ(state("t", 0).window(), 5);
  EXPECT_TRUE(state("t", 0).draining());
  submit("t", 0, 1);
  poll();
  EXPECT_EQ(upstream.inflight(2), 0) << "nothing goes to the new leader while the old one holds batches";

  // The old leader answers NOT_LEADER_OR_FOLLOWER for all 8.
  while (upstream.inflight(1) > 0) {
    auto s = upstream.take(1);
    ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kNotLeaderOrFollower); });
  }
  EXPECT_FALSE(state("t", 0).draining());
  poll();
  // Retries go one at a time, in sequence order, to the new leader, without backoff.
  ASSERT_EQ(upstream.inflight(2), 1);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 1);

  // The new leader (a legacy broker: v13) keeps the window at 5.
  upstream.node_version[2] = 13;
  std::int32_t next_seq = 1;
  std::int64_t offset = 100;
  for (int i = 0; i < 8; ++i) {
    // While retries remain, exactly one is in flight; behind the last one the
    // queued run may follow as a new batch (as Java's drain allows).
    if (i < 7) {
      ASSERT_EQ(upstream.inflight(2), 1);
    }
    auto s = upstream.take(2);
    EXPECT_EQ(s.batches[0].base_sequence, next_seq++);
    ScriptedUpstream::answer(s, [&](const SentBatch&) { return ok(offset++, 20); });
    poll();
  }
  EXPECT_EQ(state("t", 0).window(), 5);
  ASSERT_EQ(upstream.inflight(2), 1);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 9);
}

TEST_P(WindowTest, StaleMetadataWithALowerLeaderEpochIsIgnored) {
  start();
  producer->on_metadata(leaders("t", {{1, 5}}));
  producer->on_metadata(leaders("t", {{2, 4}}));
  EXPECT_EQ(producer->partition(TopicPartition{"t", 0}), nullptr) << "partition state is created on first submit";
  submit("t", 0, 1);
  producer->on_metadata(leaders("t", {{1, 5}}));
  producer->on_metadata(leaders("t", {{2, 4}}));
  EXPECT_EQ(state("t", 0).leader_id(), 1);
  EXPECT_EQ(state("t", 0).leader_epoch(), 5);
}

class WindowPlacementTest : public PipelineFixture {
 public:
  // The window learned from one v14 answer with these two tags.
  std::int32_t learned(std::int32_t partition_tag, std::int32_t topic_tag) {
    start();
    producer->on_metadata(leaders("t", {{1, 0}}));
    submit("t", 0, 1);
    poll();
    auto first = upstream.take();
    ScriptedUpstream::answer(first, [&](const SentBatch&) {
      PartitionAnswer a = ok(0, partition_tag);
      a.topic_window = topic_tag;
      return a;
    });
    return state("t", 0).window();
  }
};

// KIP-1269 moved the tag from PartitionProduceResponse to TopicProduceResponse:
// a response may carry either, or both, and the partition's own value wins.
TEST_F(WindowPlacementTest, ThePartitionsValueWinsOverTheTopics) {
  EXPECT_EQ(learned(10, 20), 10);
}

TEST_F(WindowPlacementTest, TheTopicsValueAppliesWhenThePartitionSendsNone) {
  EXPECT_EQ(learned(5, 20), 20);  // 5 is the default: a tag never written
}

TEST_F(WindowPlacementTest, NeitherSentMeansFive) {
  EXPECT_EQ(learned(5, 5), 5);
}

INSTANTIATE_TEST_SUITE_P(Placements, WindowTest,
                         ::testing::Values(WindowPlacement::kPartition, WindowPlacement::kTopic,
                                           WindowPlacement::kBoth),
                         [](const ::testing::TestParamInfo<WindowPlacement>& info) {
                           switch (info.param) {
                             case WindowPlacement::kPartition:
                               return "Partition";
                             case WindowPlacement::kTopic:
                               return "Topic";
                             case WindowPlacement::kBoth:
                               return "Both";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace pp::testing
