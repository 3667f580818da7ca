// The first-sequence rule (KAFKA-15591, Kafka 4.5): a broker without state for
// the producer on a partition that never held a record takes only sequence 0.
// The pipeline never continues a sequence into a re-created topic's new log,
// and a continued sequence refused anyway is recovered by an epoch bump and
// counted apart (PIPELINE.md, "The first-sequence rule").
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class FirstSequenceTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    observer = &counts;
  }

  // Submits `records` as one run to t-0, sends it and answers `answer`.
  // Returns the batch as it went out.
  SentBatch send_and_answer(int records, const PartitionAnswer& answer) {
    submit("t", 0, records);
    poll();
    auto sent = upstream.take_with("t", 0);
    SentBatch batch = sent.batches.at(0);
    ScriptedUpstream::answer(sent, [&](const SentBatch&) { return answer; });
    poll();
    return batch;
  }

  static MetadataUpdate topic_with_id(std::uint8_t id) {
    MetadataUpdate m = leaders("t", {{1, 0}});
    m.topics.begin()->second.topic_id.bytes[0] = id;
    return m;
  }

  CountingObserver counts;
};

TEST_F(FirstSequenceTest, ARecreatedTopicRestartsTheSequenceAtZeroUnderANewEpoch) {
  start();
  producer->on_metadata(topic_with_id(7));
  EXPECT_EQ(send_and_answer(3, ok(0)).base_sequence, 0);
  EXPECT_EQ(send_and_answer(2, ok(3)).base_sequence, 3);

  // Deleted and created again: same name, new id, an empty log.
  producer->on_metadata(topic_with_id(8));
  const SentBatch next = send_and_answer(2, ok(0));
  EXPECT_EQ(next.base_sequence, 0) << "never sequence 5 into a log that holds no state for us";
  EXPECT_EQ(next.producer_epoch, 1);
  EXPECT_EQ(counts.bumps["topic_recreated"], 1);
  EXPECT_EQ(counts.bumps["out_of_order_sequence"], 0);
}

TEST_F(FirstSequenceTest, ARecreatedTopicsUnackedBatchIsRenumberedOnceItsOldAttemptIsBack) {
  start();
  producer->on_metadata(topic_with_id(7));
  EXPECT_EQ(send_and_answer(3, ok(0)).base_sequence, 0);
  submit("t", 0, 2);
  poll();
  auto in_flight = upstream.take_with("t", 0);
  EXPECT_EQ(in_flight.batches.at(0).base_sequence, 3);

  producer->on_metadata(topic_with_id(8));
  poll();
  EXPECT_TRUE(upstream.outstanding.empty()) << "nothing goes before the old attempt is back";
  ScriptedUpstream::answer(in_flight, [](const SentBatch&) { return error(ErrorCode::kUnknownTopicId); });
  producer->on_metadata(topic_with_id(8));
  clock.advance(1000);
  poll();
  auto retry = upstream.take_with("t", 0);
  EXPECT_EQ(retry.batches.at(0).base_sequence, 0);
  EXPECT_EQ(retry.batches.at(0).producer_epoch, 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(0); });
  poll();
  ASSERT_TRUE(results.back().has_value());
  EXPECT_EQ(results.back()->error, ErrorCode::kNone);
}

// An answer to a request sent under the topic's old id speaks of the deleted
// log, whatever it says: its batch's outcome there is unknown (a timeout),
// and it is resent into the new log from sequence 0 under the new epoch.
// Below v13 the request named the topic, so its answer names it too.
class OldTopicIdAnswerTest : public FirstSequenceTest, public ::testing::WithParamInterface<std::int16_t> {};

TEST_P(OldTopicIdAnswerTest, IsATimeoutNotAnAckOfTheNewLog) {
  upstream.node_version[1] = GetParam();
  start();
  producer->on_metadata(topic_with_id(7));
  EXPECT_EQ(send_and_answer(3, ok(0)).base_sequence, 0);
  const std::size_t slot = submit("t", 0, 2);
  poll();
  auto in_flight = upstream.take_with("t", 0);
  EXPECT_EQ(in_flight.batches.at(0).base_sequence, 3);

  producer->on_metadata(topic_with_id(8));
  // The deleted log's answer: appended there at offset 3, with a window of 20.
  ScriptedUpstream::answer(in_flight, [](const SentBatch&) { return ok(3, 20); });
  poll();
  EXPECT_FALSE(results[slot].has_value()) << "an ack from the deleted log does not answer the client";
  EXPECT_EQ(state("t", 0).window(), 5) << "the old log's window says nothing of the new one";

  clock.advance(1000);
  poll();
  auto retry = upstream.take_with("t", 0);
  EXPECT_EQ(retry.batches.at(0).base_sequence, 0);
  EXPECT_EQ(retry.batches.at(0).producer_epoch, 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(0); });
  poll();
  ASSERT_TRUE(results[slot].has_value());
  EXPECT_EQ(results[slot]->error, ErrorCode::kNone);
  EXPECT_EQ(results[slot]->base_offset, 0) << "the offset in the new log";
  EXPECT_EQ(counts.bumps["topic_recreated"], 1);
  EXPECT_EQ(counts.ambiguous["epoch_bump"], 1) << "its first attempt's outcome is unknown";
}

INSTANTIATE_TEST_SUITE_P(ByNameAndById, OldTopicIdAnswerTest, ::testing::Values(std::int16_t{12}, std::int16_t{14}),
                         [](const auto& info) { return "ProduceV" + std::to_string(info.param); });

TEST_F(FirstSequenceTest, AContinuedSequenceRefusedIsRecoveredByABumpAndCountedApart) {
  start();
  producer->on_metadata(topic_with_id(7));
  EXPECT_EQ(send_and_answer(3, ok(0)).base_sequence, 0);
  clock.advance(10000);
  ASSERT_EQ(producer->retire_idle_partitions(clock.now_ms() - 5000), 1u);

  // The memo continues at 3; this broker has no state for us there (its
  // log was replaced under the same id, as a 4.5 broker's never-written
  // partition) and refuses it.
  const SentBatch refused = send_and_answer(2, error(ErrorCode::kOutOfOrderSequenceNumber));
  EXPECT_EQ(refused.base_sequence, 3);
  auto retry = upstream.take_with("t", 0);
  EXPECT_EQ(retry.batches.at(0).base_sequence, 0) << "renumbered from 0";
  EXPECT_EQ(retry.batches.at(0).producer_epoch, 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(0); });
  poll();
  EXPECT_EQ(counts.bumps["first_sequence"], 1);
  EXPECT_EQ(counts.bumps["out_of_order_sequence"], 0);
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, ErrorCode::kNone) << "nothing lost";
  }
}

TEST_F(FirstSequenceTest, AnOutOfOrderAnswerAfterAnAckInTheSameLogKeepsItsReason) {
  start();
  producer->on_metadata(topic_with_id(7));
  EXPECT_EQ(send_and_answer(3, ok(0)).base_sequence, 0);
  send_and_answer(2, error(ErrorCode::kOutOfOrderSequenceNumber));
  EXPECT_EQ(counts.bumps["out_of_order_sequence"], 1);
  EXPECT_EQ(counts.bumps["first_sequence"], 0);
}

}  // namespace
}  // namespace pp::testing
