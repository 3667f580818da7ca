// Broker-side idempotence rules of the test cluster (docs/design/PIPELINE.md D.1-D.3),
// driven through the Produce handler directly, without sockets.
#include <gtest/gtest.h>

#include "tests/integration/broker/broker_test_util.h"

namespace pp::test_broker {
namespace {

using testing::BatchSpec;
using testing::make_batch;
using testing::partition_of;
using testing::produce;

class DedupRules : public ::testing::Test {
 protected:
  static TestClusterOptions options() {
    TestClusterOptions o;
    o.brokers = 3;
    o.legacy_brokers = 1;  // broker 3
    o.topics = {{"t5", 1, 5}, {"t20", 1, 20}};
    return o;
  }
  ClusterState cluster_{options(), 1};
  // Leaders are spread round-robin: t5-0 on broker 1, t20-0 on broker 2.
  static constexpr BrokerId kT5Leader = 1;
  static constexpr BrokerId kT20Leader = 2;
  static constexpr BrokerId kLegacy = 3;

  // Sends batches 0..n-1 of 2 records each (sequences 0, 2, 4, ...).
  void send_batches(const std::string& topic, BrokerId to, int n) {
    for (int i = 0; i < n; ++i) {
      auto r = produce(cluster_, to, topic, 0, make_batch({.sequence = 2 * i, .records = 2}));
      ASSERT_EQ(r.error_code, ErrorCode::kNone) << "batch " << i;
      ASSERT_EQ(r.base_offset, 2 * i);
    }
  }
};

TEST_F(DedupRules, LeadersSpreadRoundRobin) {
  EXPECT_EQ(partition_of(cluster_, "t5", 0).leader, kT5Leader);
  EXPECT_EQ(partition_of(cluster_, "t20", 0).leader, kT20Leader);
  EXPECT_EQ(partition_of(cluster_, "t5", 0).leader_epoch, 0);
}

TEST_F(DedupRules, DuplicateWithinWindowGetsOriginalOffsetAndIsNotAppended) {
  send_batches("t5", kT5Leader, 5);
  // The oldest retained batch (sequences 0-1) retried: NONE at its offset.
  auto r = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0, .records = 2}));
  EXPECT_EQ(r.error_code, ErrorCode::kNone);
  EXPECT_EQ(r.base_offset, 0);
  EXPECT_EQ(r.log_append_time_ms, 1'700'000'000'001);  // the batch's MaxTimestamp, as Kafka does
  auto& p = partition_of(cluster_, "t5", 0);
  EXPECT_EQ(p.log.record_count(), 10);
  EXPECT_EQ(p.duplicates, 1);
}

TEST_F(DedupRules, DuplicateMatchesOnTheExactRangeNotThePayload) {
  send_batches("t5", kT5Leader, 2);
  // Same (first, last) sequence range, other bytes: still a duplicate (D.2 5a).
  auto same_range =
      produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 2, .records = 2, .value_prefix = "other"}));
  EXPECT_EQ(same_range.error_code, ErrorCode::kNone);
  EXPECT_EQ(same_range.base_offset, 2);
  // An overlapping but different range is no duplicate: out of order.
  auto overlap = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 2, .records = 1}));
  EXPECT_EQ(overlap.error_code, ErrorCode::kOutOfOrderSequenceNumber);
}

// reject-key (issue 14): refused whole, as LogValidator refuses, but
// without record_errors; nothing appended and no sequence used.
TEST_F(DedupRules, RejectKeyRefusesTheWholeBatchWithoutRecordErrors) {
  auto& p = partition_of(cluster_, "t5", 0);
  p.rejected_keys["k2"] = ErrorCode::kInvalidRecord;
  auto refused = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0, .records = 3}));
  EXPECT_EQ(refused.error_code, ErrorCode::kInvalidRecord);
  EXPECT_TRUE(refused.record_errors.empty());
  EXPECT_EQ(p.log.record_count(), 0);
  EXPECT_EQ(p.rejected_batches, 1);
  auto without_it = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0, .records = 2}));
  EXPECT_EQ(without_it.error_code, ErrorCode::kNone) << "sequence 0 is still the next one";
  EXPECT_EQ(without_it.base_offset, 0);
  EXPECT_EQ(p.rejected_batches, 1);
}

TEST_F(DedupRules, DuplicateJustOutsideTheWindowIsOutOfOrder) {
  send_batches("t5", kT5Leader, 6);  // batch 0 has been evicted from the 5 retained
  auto evicted = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0, .records = 2}));
  EXPECT_EQ(evicted.error_code, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(evicted.base_offset, -1);
  auto oldest_kept = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 2, .records = 2}));
  EXPECT_EQ(oldest_kept.error_code, ErrorCode::kNone);
  EXPECT_EQ(oldest_kept.base_offset, 2);
  EXPECT_EQ(partition_of(cluster_, "t5", 0).log.record_count(), 12);
}

TEST_F(DedupRules, GapIsOutOfOrderAndNothingIsAppended) {
  send_batches("t5", kT5Leader, 2);  // last sequence 3
  auto gap = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 5}));
  EXPECT_EQ(gap.error_code, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(gap.log_start_offset, 0);  // set for log-layer errors (KAFKA-5793)
  EXPECT_EQ(partition_of(cluster_, "t5", 0).log.record_count(), 4);
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 4})).error_code, ErrorCode::kNone);
}

TEST_F(DedupRules, EpochBumpResetsSequencesAndFencesTheOldEpoch) {
  send_batches("t5", kT5Leader, 3);
  // A new epoch must start at 0 ("Invalid sequence number for new epoch").
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 1, .sequence = 6})).error_code,
            ErrorCode::kOutOfOrderSequenceNumber);
  auto bumped = produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 1, .sequence = 0}));
  EXPECT_EQ(bumped.error_code, ErrorCode::kNone);
  EXPECT_EQ(bumped.base_offset, 6);
  // The old epoch is fenced, retries of its batches included.
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 0, .sequence = 6})).error_code,
            ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 0, .sequence = 4, .records = 2})).error_code,
            ErrorCode::kInvalidProducerEpoch);
  // The new epoch forgot the old epoch's batches: its own retry dedups.
  auto retry = produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 1, .sequence = 0}));
  EXPECT_EQ(retry.error_code, ErrorCode::kNone);
  EXPECT_EQ(retry.base_offset, 6);
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.epoch = 1, .sequence = 1})).error_code,
            ErrorCode::kNone);
}

TEST_F(DedupRules, StateSurvivesALeadershipMove) {
  auto& p = partition_of(cluster_, "t5", 0);
  send_batches("t5", kT5Leader, 3);
  ASSERT_TRUE(cluster_.move_leader(p, 2));
  EXPECT_EQ(p.leader_epoch, 1);
  // The old leader now refuses, pointing at the new one (KIP-951, v10+).
  auto old = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 4, .records = 2}), 10);
  EXPECT_EQ(old.error_code, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(old.current_leader.leader_id, 2);
  EXPECT_EQ(old.current_leader.leader_epoch, 1);
  // A retry to the new leader is still recognised...
  auto retry = produce(cluster_, 2, "t5", 0, make_batch({.sequence = 4, .records = 2}));
  EXPECT_EQ(retry.error_code, ErrorCode::kNone);
  EXPECT_EQ(retry.base_offset, 4);
  // ...and the sequence continues there.
  EXPECT_EQ(produce(cluster_, 2, "t5", 0, make_batch({.sequence = 6})).base_offset, 6);
  EXPECT_EQ(p.duplicates, 1);
  EXPECT_EQ(p.log.records().back().leader, 2);
  EXPECT_EQ(p.log.records().back().leader_epoch, 1);
}

TEST_F(DedupRules, TruncatedTailIsAppendedAgainOnTheNewLeader) {
  auto& p = partition_of(cluster_, "t5", 0);
  send_batches("t5", kT5Leader, 3);
  // The last batch never reached the new leader (docs/design/PIPELINE.md D.4).
  ASSERT_TRUE(cluster_.move_leader(p, 2, 1));
  EXPECT_EQ(p.log.log_end_offset(), 4);
  auto retry = produce(cluster_, 2, "t5", 0, make_batch({.sequence = 4, .records = 2}));
  EXPECT_EQ(retry.error_code, ErrorCode::kNone);
  EXPECT_EQ(retry.base_offset, 4);
  EXPECT_EQ(p.duplicates, 0);
  EXPECT_EQ(p.log.record_count(), 6);
}

TEST_F(DedupRules, WindowComesFromTheTopic) {
  send_batches("t20", kT20Leader, 21);
  EXPECT_EQ(produce(cluster_, kT20Leader, "t20", 0, make_batch({.sequence = 0, .records = 2})).error_code,
            ErrorCode::kOutOfOrderSequenceNumber);
  auto oldest = produce(cluster_, kT20Leader, "t20", 0, make_batch({.sequence = 2, .records = 2}), 14);
  EXPECT_EQ(oldest.error_code, ErrorCode::kNone);
  EXPECT_EQ(oldest.base_offset, 2);
  EXPECT_EQ(oldest.producer_state_batches_to_retain, 20);  // KIP-1269 tag, v14
}

TEST_F(DedupRules, LegacyBrokerKeepsFiveWhateverTheTopicSays) {
  auto& p = partition_of(cluster_, "t20", 0);
  send_batches("t20", kT20Leader, 8);
  ASSERT_TRUE(cluster_.move_leader(p, kLegacy));
  EXPECT_EQ(cluster_.effective_retain(p), 5);
  // Rebuilt from the log with a window of 5: batch 2 is gone, batch 3 kept.
  EXPECT_EQ(produce(cluster_, kLegacy, "t20", 0, make_batch({.sequence = 4, .records = 2}), 13).error_code,
            ErrorCode::kOutOfOrderSequenceNumber);
  auto kept = produce(cluster_, kLegacy, "t20", 0, make_batch({.sequence = 6, .records = 2}), 13);
  EXPECT_EQ(kept.error_code, ErrorCode::kNone);
  EXPECT_EQ(kept.base_offset, 6);
  EXPECT_EQ(kept.producer_state_batches_to_retain, 5);  // nothing to announce
  // Back on a KIP-1269 broker the window is 20 again, rebuilt from the log.
  ASSERT_TRUE(cluster_.move_leader(p, 1));
  EXPECT_EQ(produce(cluster_, 1, "t20", 0, make_batch({.sequence = 0, .records = 2}), 14).base_offset, 0);
  auto* legacy_produce = find_served_api(true, ApiKey::kProduce);
  ASSERT_NE(legacy_produce, nullptr);
  EXPECT_EQ(legacy_produce->versions.max, 13);
  EXPECT_EQ(find_served_api(false, ApiKey::kProduce)->versions.max, 14);
}

TEST_F(DedupRules, SequenceWrapsAfterInt32Max) {
  // 2.5-4.4 accept any first sequence without state (KIP-360).
  auto first = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = INT32_MAX - 1, .records = 3}));  // ..., 0
  ASSERT_EQ(first.error_code, ErrorCode::kNone);
  EXPECT_EQ(partition_of(cluster_, "t5", 0).log.records().back().sequence, 0);
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 1})).error_code, ErrorCode::kNone);
  auto retry = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = INT32_MAX - 1, .records = 3}));
  EXPECT_EQ(retry.error_code, ErrorCode::kNone);
  EXPECT_EQ(retry.base_offset, 0);
}

TEST_F(DedupRules, BadCrcIsCorruptMessageAndTwoBatchesInvalidRecord) {
  Bytes batch = make_batch({.sequence = 0, .records = 2});
  batch.back() ^= 0x01;
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, batch).error_code, ErrorCode::kCorruptMessage);
  Bytes two = make_batch({.sequence = 0});
  Bytes second = make_batch({.sequence = 1});
  two.insert(two.end(), second.begin(), second.end());
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, two).error_code, ErrorCode::kInvalidRecord);
  EXPECT_EQ(partition_of(cluster_, "t5", 0).log.record_count(), 0);
  // Producer id without a sequence.
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = -1})).error_code, ErrorCode::kInvalidRecord);
  // zstd needs Produce v7 (KIP-110).
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.compression = CompressionCodec::kZstd}), 6).error_code,
            ErrorCode::kUnsupportedCompressionType);
}

TEST_F(DedupRules, CompressedBatchesAreDecodedForInspection) {
  auto r = produce(cluster_, kT5Leader, "t5", 0, make_batch({.records = 3, .compression = CompressionCodec::kLz4}));
  ASSERT_EQ(r.error_code, ErrorCode::kNone);
  const auto& recs = partition_of(cluster_, "t5", 0).log.records();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(std::string(recs[2].value->begin(), recs[2].value->end()), "v2");
  EXPECT_EQ(recs[2].sequence, 2);
  EXPECT_EQ(recs[2].producer_id, 1000);
}

TEST_F(DedupRules, InjectedErrorsAppendOnlyWhenKafkaWould) {
  auto& p = partition_of(cluster_, "t5", 0);
  p.injected_errors.push_back({ErrorCode::kNotEnoughReplicas, 1});
  p.injected_errors.push_back({ErrorCode::kNotEnoughReplicasAfterAppend, 1});
  EXPECT_EQ(produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0})).error_code,
            ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(p.log.record_count(), 0);
  auto after = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0}));
  EXPECT_EQ(after.error_code, ErrorCode::kNotEnoughReplicasAfterAppend);
  EXPECT_EQ(p.log.record_count(), 1);
  auto retry = produce(cluster_, kT5Leader, "t5", 0, make_batch({.sequence = 0}));
  EXPECT_EQ(retry.error_code, ErrorCode::kNone);  // the retry dedups
  EXPECT_EQ(retry.base_offset, 0);
  EXPECT_TRUE(p.injected_errors.empty());
}

TEST_F(DedupRules, WatchdogCountsHeldBatchesPerProducer) {
  auto& p = partition_of(cluster_, "t5", 0);
  std::vector<HeldBatch> held;
  for (int i = 0; i < 7; ++i) {
    const Bytes batch = make_batch({.sequence = i});
    auto result = handle_produce(cluster_, kT5Leader, testing::produce_request("t5", 0, batch), 9);
    held.insert(held.end(), result.held.begin(), result.held.end());
  }
  // Another producer's batch is counted separately.
  const Bytes other = make_batch({.producer_id = 2000, .sequence = 0});
  release(handle_produce(cluster_, kT5Leader, testing::produce_request("t5", 0, other), 9).held);
  EXPECT_EQ(p.watchdog.max_inflight(), 7);
  EXPECT_EQ(p.watchdog.violations(), 2);  // the 6th and the 7th arrived over the window of 5
  release(held);
  EXPECT_EQ(p.watchdog.held(1000), 0);
}

struct NoStateCase {
  NoStateRule rule;
  bool ever_written;
  ErrorCode expected;
};

class NoStateRules : public ::testing::TestWithParam<NoStateCase> {};

TEST_P(NoStateRules, FirstSequenceWithoutState) {
  const auto& c = GetParam();
  TestClusterOptions o;
  o.topics = {{"t", 1, 5}};
  o.no_state_rule = c.rule;
  ClusterState cluster(o, 1);
  if (c.ever_written) {
    // Another producer wrote to the partition before.
    ASSERT_EQ(produce(cluster, 1, "t", 0, make_batch({.producer_id = 7, .sequence = 0})).error_code, ErrorCode::kNone);
  }
  EXPECT_EQ(produce(cluster, 1, "t", 0, make_batch({.sequence = 42})).error_code, c.expected) << to_string(c.rule);
  EXPECT_EQ(produce(cluster, 1, "t", 0, make_batch({.producer_id = 99, .sequence = 0})).error_code, ErrorCode::kNone);
}

INSTANTIATE_TEST_SUITE_P(
    Generations, NoStateRules,
    ::testing::Values(NoStateCase{NoStateRule::kKafka0_11, false, ErrorCode::kOutOfOrderSequenceNumber},
                      NoStateCase{NoStateRule::kKafka1_0, false, ErrorCode::kUnknownProducerId},
                      NoStateCase{NoStateRule::kKafka2_5, false, ErrorCode::kNone},
                      NoStateCase{NoStateRule::kKafka4_5, false, ErrorCode::kOutOfOrderSequenceNumber},
                      NoStateCase{NoStateRule::kKafka4_5, true, ErrorCode::kNone}));

TEST(DedupRules011, OnlyTheLastBatchIsRetained) {
  TestClusterOptions o;
  o.topics = {{"t", 1, 5}};
  o.no_state_rule = NoStateRule::kKafka0_11;
  ClusterState cluster(o, 1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(produce(cluster, 1, "t", 0, make_batch({.sequence = i})).error_code, ErrorCode::kNone);
  }
  EXPECT_EQ(produce(cluster, 1, "t", 0, make_batch({.sequence = 2})).base_offset, 2);
  EXPECT_EQ(produce(cluster, 1, "t", 0, make_batch({.sequence = 1})).error_code, ErrorCode::kDuplicateSequenceNumber);
}

TEST(InitProducerId, AllocatesThenBumpsAKnownEpoch) {
  ClusterState cluster(TestClusterOptions{}, 1);
  auto first = cluster.init_producer_id(-1, -1, 3);
  auto second = cluster.init_producer_id(-1, -1, 3);
  EXPECT_EQ(first.error, ErrorCode::kNone);
  EXPECT_NE(first.producer_id, second.producer_id);
  EXPECT_EQ(first.producer_epoch, 0);
  // KIP-360: the current id and epoch come back bumped.
  auto bumped = cluster.init_producer_id(first.producer_id, 0, 3);
  EXPECT_EQ(bumped.producer_id, first.producer_id);
  EXPECT_EQ(bumped.producer_epoch, 1);
  EXPECT_EQ(cluster.init_producer_id(first.producer_id, 0, 3).error, ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(cluster.init_producer_id(first.producer_id, 0, 4).error, ErrorCode::kProducerFenced);
  EXPECT_EQ(cluster.init_producer_id(424242, 0, 3).error, ErrorCode::kInvalidProducerIdMapping);

  TestClusterOptions real;
  real.init_producer_id_mode = InitProducerIdMode::kAlwaysNewId;
  ClusterState kafka(real, 1);
  auto a = kafka.init_producer_id(-1, -1, 3);
  auto b = kafka.init_producer_id(a.producer_id, a.producer_epoch, 3);
  EXPECT_NE(a.producer_id, b.producer_id);
  EXPECT_EQ(b.producer_epoch, 0);
}

}  // namespace
}  // namespace pp::test_broker
