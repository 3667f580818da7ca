// The pipeline as the one owner of topic ids and leadership: ids it fills
// into v13+ requests, KIP-951 hints it follows (or not), the leaders it tells
// the upstream about, and the version it learns windows by.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class LeadershipTest : public PipelineFixture {};

PartitionAnswer hint(ErrorCode error, std::int32_t leader, std::int32_t epoch) {
  PartitionAnswer a;
  a.error = error;
  a.current_leader = LeaderIdAndEpoch{leader, epoch};
  return a;
}

TEST_F(LeadershipTest, TopicIdsGoOutWithV13AndAnUnknownIdDropsTheRequestToV12) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));  // leaders() gives the topic an id
  MetadataUpdate no_id = leaders("u", {{1, 0}});
  no_id.topics[0].second.topic_id = Uuid{};
  producer->on_metadata(no_id);

  submit("t", 0, 1);
  poll();
  auto with_id = upstream.take();
  EXPECT_EQ(with_id.version, 14);
  EXPECT_EQ(with_id.batches.at(0).topic_id, producer->topics().topic_id("t"));
  EXPECT_FALSE(with_id.batches.at(0).topic_id.is_zero());

  submit("u", 0, 1);
  poll();
  auto without = upstream.take_with("u", 0);
  EXPECT_EQ(without.version, 12);
  ScriptedUpstream::answer(without, [](const SentBatch&) { return ok(0); });
  ScriptedUpstream::answer(with_id, [](const SentBatch&) { return ok(0); });
  ASSERT_TRUE(results[0] && results[1]);
  EXPECT_EQ(results[0]->error, ErrorCode::kNone);
  EXPECT_EQ(results[1]->error, ErrorCode::kNone);
}

TEST_F(LeadershipTest, AHintWithANewerEpochIsFollowedWithoutAsking) {
  start();
  producer->on_metadata(leaders("t", {{1, 3}}));
  EXPECT_EQ(upstream.leaders_in_use, (std::set<std::int32_t>{1}));
  submit("t", 0, 1);
  poll();
  upstream.metadata_requested.clear();
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch&) { return hint(ErrorCode::kNotLeaderOrFollower, 2, 4); });
  EXPECT_EQ(state("t", 0).leader_id(), 2);
  EXPECT_EQ(state("t", 0).leader_epoch(), 4);
  EXPECT_EQ(producer->topics().partition({"t", 0})->leader_id, 2) << "the table follows the hint too";
  EXPECT_EQ(upstream.leaders_in_use, (std::set<std::int32_t>{2}));
  EXPECT_TRUE(upstream.metadata_requested.empty());
  poll();
  auto retry = upstream.take();
  EXPECT_EQ(retry.node, 2);
}

TEST_F(LeadershipTest, AHintNamingAnUnknownBrokerIsNotTrustedAndMetadataIsAsked) {
  start();
  producer->on_metadata(leaders("t", {{1, 3}}));
  submit("t", 0, 1);
  poll();
  upstream.metadata_requested.clear();
  auto first = upstream.take();
  // Broker 77 is in no Metadata answer and no NodeEndpoints: an epoch of
  // INT32_MAX for it would otherwise pin the partition there for good.
  ScriptedUpstream::answer(first,
                           [](const SentBatch&) { return hint(ErrorCode::kNotLeaderOrFollower, 77, INT32_MAX); });
  EXPECT_EQ(state("t", 0).leader_id(), 1);
  EXPECT_EQ(state("t", 0).leader_epoch(), 3);
  EXPECT_EQ(upstream.metadata_requested, (std::set<std::string>{"t"}));
  // The refresh names the real new leader, and the batch goes there.
  producer->on_metadata(leaders("t", {{2, 4}}));
  clock.advance(100);
  poll();
  auto retry = upstream.take();
  EXPECT_EQ(retry.node, 2);
}

TEST_F(LeadershipTest, TheWindowIsLearnedByTheVersionTheRequestWentOutAs) {
  start();
  upstream.node_sends_as[1] = 13;  // produce_version() said 14; the connection sends 13
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  auto first = upstream.take();
  EXPECT_EQ(first.version, 13);
  first.version = 14;  // have the answer carry the v14 tag anyway: it must not count
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0, 20); });
  EXPECT_EQ(state("t", 0).window(), 5);
}

// t-0 led by node 1, its sequence-0 batch acked: the first-ack rule
// (3c) no longer holds anything back.
void start_past_the_first_ack(PipelineFixture& f) {
  f.start();
  f.producer->on_metadata(leaders("t", {{1, 0}}));
  f.submit("t", 0, 1);
  f.poll();
  auto seq0 = f.upstream.take();
  ScriptedUpstream::answer(seq0, [](const SentBatch&) { return PipelineFixture::ok(0); });
}

// Kafka 4.4.0, leaders moving: a batch pipelined behind one that the new
// leader refused while it was not leader yet landed as OUT_OF_ORDER_SEQUENCE.
TEST_F(LeadershipTest, ANewLeaderTakesOneBatchAtATimeUntilItHasAckedOne) {
  start_past_the_first_ack(*this);
  producer->on_metadata(leaders("t", {{2, 1}}));  // nothing in flight: no draining

  submit("t", 0, 1);
  poll();
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u) << "the second batch waits for the new leader's first ack";
  EXPECT_EQ(state("t", 0).new_batch_hold(producer->identity()), HoldReason::kOneAtATime);
  auto refused = upstream.take();
  EXPECT_EQ(refused.node, 2);
  ScriptedUpstream::answer(refused, [](const SentBatch&) { return error(ErrorCode::kNotLeaderOrFollower); });
  clock.advance(config.retry_backoff_ms);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto retry = upstream.take();
  EXPECT_EQ(retry.batches.at(0).base_sequence, 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(1); });

  // Acked by the new leader: the partition pipelines again.
  poll();
  submit("t", 0, 1);
  poll();
  EXPECT_EQ(upstream.outstanding.size(), 2u);
  EXPECT_EQ(state("t", 0).new_batch_hold(producer->identity()), HoldReason::kNone);
}

TEST_F(LeadershipTest, AnAckFromTheOldLeaderDoesNotConfirmTheNewOne) {
  start_past_the_first_ack(*this);
  submit("t", 0, 1);
  poll();
  auto to_old = upstream.take();
  producer->on_metadata(leaders("t", {{2, 1}}));
  ScriptedUpstream::answer(to_old, [](const SentBatch&) { return ok(1); });  // drains the old leader
  EXPECT_TRUE(state("t", 0).leader_unconfirmed());
  submit("t", 0, 1);
  poll();
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().node, 2);
}

TEST_F(LeadershipTest, ARetryOutHoldsNewBatchesUntilItIsAcked) {
  start_past_the_first_ack(*this);
  submit("t", 0, 1);
  poll();
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });
  clock.advance(config.retry_backoff_ms);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u) << "nothing goes behind a retry that is out";
  EXPECT_EQ(state("t", 0).new_batch_hold(producer->identity()), HoldReason::kOneAtATime);
  auto retry = upstream.take();
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(1); });
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches.at(0).base_sequence, 2);
}

}  // namespace
}  // namespace pp::testing
