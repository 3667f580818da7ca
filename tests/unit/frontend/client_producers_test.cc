// The client dedup rules of proxy/frontend/client_producers.h as a table:
// each row sets up a partition's history (batches appended, then acknowledged,
// failed or left in flight) and checks what one more batch gets.
#include "proxy/frontend/client_producers.h"

#include <gtest/gtest.h>

namespace pp {
namespace {

enum class Then { kAck, kFail, kInFlight };

struct Step {
  std::int16_t epoch;
  std::int32_t first;
  std::int32_t last;
  Then then;
};

struct Row {
  const char* name;
  std::vector<Step> history;
  std::int16_t epoch;
  std::int32_t first;
  std::int32_t last;
  BatchVerdict verdict;
  ErrorCode error = ErrorCode::kNone;
  std::int64_t offset = -1;  // kDuplicateAcked: the original's base offset
};

constexpr std::int64_t kPid = 1000;
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// Acknowledged batches get base offset 100 * (their first sequence + 1).
std::int64_t offset_of(std::int32_t first) {
  return 100 * (static_cast<std::int64_t>(first) + 1);
}

const std::vector<Row>& rows() {
  using V = BatchVerdict;
  using E = ErrorCode;
  static const std::vector<Row> table = {
      {"first batch of an unknown producer at 0", {}, 0, 0, 4, V::kAppend},
      {"unknown producer at any sequence (Kafka 2.5+: no UNKNOWN_PRODUCER_ID)", {}, 3, 77, 80, V::kAppend},
      {"next in sequence", {{0, 0, 4, Then::kAck}}, 0, 5, 9, V::kAppend},
      {"next while the previous is in flight", {{0, 0, 4, Then::kInFlight}}, 0, 5, 9, V::kAppend},
      {"retry of an acknowledged batch",
       {{0, 0, 4, Then::kAck}, {0, 5, 9, Then::kAck}},
       0,
       0,
       4,
       V::kDuplicateAcked,
       E::kNone,
       offset_of(0)},
      {"retry of the last acknowledged batch",
       {{0, 0, 4, Then::kAck}, {0, 5, 9, Then::kAck}},
       0,
       5,
       9,
       V::kDuplicateAcked,
       E::kNone,
       offset_of(5)},
      {"retry of a batch in flight",
       {{0, 0, 4, Then::kAck}, {0, 5, 9, Then::kInFlight}},
       0,
       5,
       9,
       V::kDuplicateInFlight},
      {"retry of a failed batch is sent again", {{0, 0, 4, Then::kAck}, {0, 5, 9, Then::kFail}}, 0, 5, 9, V::kAppend},
      {"gap", {{0, 0, 4, Then::kAck}}, 0, 6, 9, V::kReject, E::kOutOfOrderSequenceNumber},
      {"overlap with other boundaries", {{0, 0, 4, Then::kAck}}, 0, 2, 6, V::kReject, E::kOutOfOrderSequenceNumber},
      {"retry older than the 5 retained",
       {{0, 0, 0, Then::kAck},
        {0, 1, 1, Then::kAck},
        {0, 2, 2, Then::kAck},
        {0, 3, 3, Then::kAck},
        {0, 4, 4, Then::kAck},
        {0, 5, 5, Then::kAck}},
       0,
       0,
       0,
       V::kReject,
       E::kOutOfOrderSequenceNumber},
      {"oldest of the 5 retained",
       {{0, 0, 0, Then::kAck},
        {0, 1, 1, Then::kAck},
        {0, 2, 2, Then::kAck},
        {0, 3, 3, Then::kAck},
        {0, 4, 4, Then::kAck},
        {0, 5, 5, Then::kAck}},
       0,
       1,
       1,
       V::kDuplicateAcked,
       E::kNone,
       offset_of(1)},
      {"stale epoch", {{1, 0, 4, Then::kAck}}, 0, 5, 9, V::kReject, E::kInvalidProducerEpoch},
      {"retry under a stale epoch of an old in-flight batch",
       {{0, 0, 4, Then::kInFlight}, {1, 0, 2, Then::kAck}},
       0,
       0,
       4,
       V::kDuplicateInFlight},
      {"new epoch at 0", {{0, 0, 4, Then::kAck}}, 1, 0, 3, V::kAppend},
      {"new epoch not at 0", {{0, 0, 4, Then::kAck}}, 1, 5, 9, V::kReject, E::kOutOfOrderSequenceNumber},
      {"old epoch's batches forgotten after a new epoch",
       {{0, 0, 4, Then::kAck}, {1, 0, 4, Then::kAck}},
       0,
       0,
       4,
       V::kReject,
       E::kInvalidProducerEpoch},
      {"sequence wraps after INT32_MAX", {{0, kMax - 4, kMax, Then::kAck}}, 0, 0, 4, V::kAppend},
      {"no wrap elsewhere", {{0, kMax - 4, kMax, Then::kAck}}, 0, 1, 4, V::kReject, E::kOutOfOrderSequenceNumber},
  };
  return table;
}

class ClientDedupTable : public ::testing::TestWithParam<Row> {};

TEST_P(ClientDedupTable, Verdict) {
  const Row& row = GetParam();
  ClientProducers producers(ClientProducersConfig{});
  std::uint64_t now = 1000;
  for (const Step& s : row.history) {
    BatchCheck c = producers.check("t", 0, ClientBatch{kPid, s.epoch, s.first, s.last}, now++);
    ASSERT_EQ(c.verdict, BatchVerdict::kAppend) << "history step at sequence " << s.first;
    if (s.then == Then::kAck)
      producers.complete(c.handle, ClientBatchOutcome{ErrorCode::kNone, offset_of(s.first), -1, 0, {}});
    if (s.then == Then::kFail)
      producers.complete(c.handle, ClientBatchOutcome{ErrorCode::kRequestTimedOut, -1, -1, -1, {}});
  }
  BatchCheck c = producers.check("t", 0, ClientBatch{kPid, row.epoch, row.first, row.last}, now);
  EXPECT_EQ(c.verdict, row.verdict);
  if (row.verdict == BatchVerdict::kReject) {
    EXPECT_EQ(c.outcome.error, row.error);
    EXPECT_FALSE(c.outcome.error_message.empty());
  }
  if (row.verdict == BatchVerdict::kDuplicateAcked) {
    EXPECT_EQ(c.outcome.base_offset, row.offset);
  }
  // The same batch to another partition is a different batch.
  if (row.verdict != BatchVerdict::kAppend) {
    EXPECT_EQ(producers.check("t", 1, ClientBatch{kPid, row.epoch, row.first, row.last}, now).verdict,
              BatchVerdict::kAppend);
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, ClientDedupTable, ::testing::ValuesIn(rows()), [](const auto& info) {
  std::string name;
  for (const char* p = info.param.name; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
});

TEST(ClientDedup, RetryInFlightGetsTheOriginalsOutcome) {
  ClientProducers producers(ClientProducersConfig{});
  BatchCheck first = producers.check("t", 0, ClientBatch{kPid, 0, 0, 9}, 1);
  BatchCheck retry = producers.check("t", 0, ClientBatch{kPid, 0, 0, 9}, 2);
  ASSERT_EQ(retry.verdict, BatchVerdict::kDuplicateInFlight);
  EXPECT_EQ(retry.handle, first.handle);
  std::int64_t told = -1;
  producers.attach(retry.handle, [&](const ClientBatchOutcome& o) { told = o.base_offset; });
  auto waiters = producers.complete(first.handle, ClientBatchOutcome{ErrorCode::kNone, 42, -1, 0, {}});
  ASSERT_EQ(waiters.size(), 1u);
  waiters[0](ClientBatchOutcome{ErrorCode::kNone, 42, -1, 0, {}});
  EXPECT_EQ(told, 42);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 9}, 3).outcome.base_offset, 42);
  EXPECT_EQ(producers.batches_in_flight(), 0u);
}

TEST(ClientDedup, RetainsMoreWhenConfigured) {
  ClientProducersConfig config;
  config.batches_to_retain = 20;
  ClientProducers producers(config);
  for (std::int32_t s = 0; s < 20; ++s) {
    auto c = producers.check("t", 0, ClientBatch{kPid, 0, s, s}, 1);
    producers.complete(c.handle, ClientBatchOutcome{ErrorCode::kNone, s, -1, 0, {}});
  }
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 0}, 2).verdict, BatchVerdict::kDuplicateAcked);
}

TEST(ClientDedup, InFlightBatchesAreNeverDropped) {
  ClientProducers producers(ClientProducersConfig{});
  std::vector<std::uint64_t> handles;
  for (std::int32_t s = 0; s < 8; ++s) handles.push_back(producers.check("t", 0, ClientBatch{kPid, 0, s, s}, 1).handle);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 0}, 2).verdict, BatchVerdict::kDuplicateInFlight);
  for (std::uint64_t h : handles) producers.complete(h, ClientBatchOutcome{ErrorCode::kNone, 0, -1, 0, {}});
  // Once acknowledged, only the last 5 are kept.
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 2, 2}, 3).verdict, BatchVerdict::kReject);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 3, 3}, 3).verdict, BatchVerdict::kDuplicateAcked);
}

TEST(ClientInitProducerId, FreshIdsBumpsAndRetriedBumps) {
  ClientProducersConfig config;
  config.first_producer_id = 500;
  ClientProducers producers(config);
  auto a = producers.init_producer_id(-1, -1, 1);
  auto b = producers.init_producer_id(-1, -1, 1);
  EXPECT_EQ(a.error, ErrorCode::kNone);
  EXPECT_EQ(a.producer_id, 500);
  EXPECT_EQ(a.epoch, 0);
  EXPECT_EQ(b.producer_id, 501);
  // KIP-360: the current id and epoch give the same id, epoch + 1...
  auto bump = producers.init_producer_id(500, 0, 2);
  EXPECT_TRUE(bump.bumped);
  EXPECT_EQ(bump.producer_id, 500);
  EXPECT_EQ(bump.epoch, 1);
  // ...and asking again (the answer was lost) gets the same answer.
  auto again = producers.init_producer_id(500, 0, 3);
  EXPECT_EQ(again.producer_id, 500);
  EXPECT_EQ(again.epoch, 1);
  // A client that bumped locally (Java) asks from its own epoch.
  auto local = producers.init_producer_id(500, 7, 4);
  EXPECT_EQ(local.producer_id, 500);
  EXPECT_EQ(local.epoch, 8);
  // An id never handed out: a fresh one, as a broker does.
  auto unknown = producers.init_producer_id(9, 3, 5);
  EXPECT_FALSE(unknown.bumped);
  EXPECT_EQ(unknown.producer_id, 502);
  EXPECT_EQ(unknown.epoch, 0);
  // An exhausted epoch: a fresh id.
  auto exhausted = producers.init_producer_id(500, 32766, 6);
  EXPECT_NE(exhausted.producer_id, 500);
  EXPECT_EQ(exhausted.epoch, 0);
}

TEST(ClientInitProducerId, IdsInUseAreSkipped) {
  ClientProducersConfig config;
  config.first_producer_id = 10;
  ClientProducers producers(config);
  producers.check("t", 0, ClientBatch{10, 0, 0, 0}, 1);  // a client from before a restart
  EXPECT_EQ(producers.init_producer_id(-1, -1, 1).producer_id, 11);
}

TEST(ClientProducerBounds, CountAndIdleExpiry) {
  ClientProducersConfig config;
  config.max_producers = 2;
  config.idle_timeout_ms = 10000;
  ClientProducers producers(config);
  auto a = producers.init_producer_id(-1, -1, 1);
  auto b = producers.init_producer_id(-1, -1, 2);
  auto in_flight = producers.check("t", 0, ClientBatch{b.producer_id, 0, 0, 0}, 3);
  // Full: the least recently used with nothing in flight (a) makes room.
  auto c = producers.init_producer_id(-1, -1, 4);
  EXPECT_EQ(c.error, ErrorCode::kNone);
  EXPECT_EQ(producers.producers(), 2u);
  EXPECT_EQ(producers.init_producer_id(a.producer_id, 0, 5).bumped, false);  // a was forgotten
  // Idle for the timeout: forgotten, unless something is in flight.
  producers.expire(20000);
  EXPECT_EQ(producers.producers(), 1u);  // b stays: its batch is in flight
  producers.complete(in_flight.handle, ClientBatchOutcome{});
  producers.expire(40000);
  EXPECT_EQ(producers.producers(), 0u);
}

TEST(ClientProducerBounds, FullOfBusyProducersRefusesRetriably) {
  ClientProducersConfig config;
  config.max_producers = 1;
  ClientProducers producers(config);
  producers.check("t", 0, ClientBatch{1, 0, 0, 0}, 1);
  EXPECT_EQ(producers.init_producer_id(-1, -1, 2).error, ErrorCode::kCoordinatorLoadInProgress);
  auto c = producers.check("t", 0, ClientBatch{2, 0, 0, 0}, 2);
  EXPECT_EQ(c.verdict, BatchVerdict::kReject);
  EXPECT_EQ(c.outcome.error, ErrorCode::kNotEnoughReplicas);
}

TEST(ClientBatchSequence, LastSequenceWraps) {
  EXPECT_EQ(last_sequence_of(0, 4), 4);
  EXPECT_EQ(last_sequence_of(kMax, 0), kMax);
  EXPECT_EQ(last_sequence_of(kMax, 1), 0);
  EXPECT_EQ(last_sequence_of(kMax - 1, 5), 3);
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

const ClientBatchOutcome kTimedOut{ErrorCode::kRequestTimedOut, -1, -1, -1, "delivery timeout"};
const ClientBatchOutcome kWritten{ErrorCode::kNone, 7, -1, 0, {}};

// A failed batch is not in the log: what follows it is a gap until it is
// retried, as on a broker, so nothing reaches the log ahead of its retry.
TEST(ClientDedupOrder, AfterAFailureTheNextNewBatchIsAGapUntilTheRetry) {
  ClientProducers producers(ClientProducersConfig{});
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle, kWritten);
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 2).handle, kTimedOut);
  BatchCheck next = producers.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 3);
  EXPECT_EQ(next.verdict, BatchVerdict::kReject);
  EXPECT_EQ(next.outcome.error, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 4).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 5).verdict, BatchVerdict::kAppend);
}

TEST(ClientDedupOrder, FailedBatchesGoAgainInSequenceOrder) {
  ClientProducers producers(ClientProducersConfig{});
  const std::uint64_t a = producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle;
  const std::uint64_t b = producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 1).handle;
  producers.complete(a, kTimedOut);
  producers.complete(b, kTimedOut);
  BatchCheck early = producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 2);
  EXPECT_EQ(early.verdict, BatchVerdict::kReject) << "the second failed batch before the first";
  EXPECT_EQ(early.outcome.error, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 3).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 4).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 10, 10}, 5).verdict, BatchVerdict::kAppend);
}

TEST(ClientDedupOrder, NoRewindPastABatchThatIsInFlightOrAcknowledged) {
  ClientProducers producers(ClientProducersConfig{});
  const std::uint64_t a = producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle;
  const std::uint64_t b = producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 1).handle;
  producers.complete(a, kTimedOut);
  // b is still in flight: the partition's sequence stays after it.
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 2).verdict, BatchVerdict::kAppend);
  producers.complete(b, kWritten);
  // The known limit (CLIENT_DEDUP.md): the retry of a, whose successor is
  // already in the log, is still sent.
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 3).verdict, BatchVerdict::kAppend);
}

// A batch that failed with its outcome unknown may be in the log: its retry
// is answered that failure again instead of being sent a second time, and a
// later failure does not rewind the sequence to before it.
TEST(ClientDedupOrder, AFailureThatMayBeWrittenIsNeverSentAgain) {
  ClientProducers producers(ClientProducersConfig{});
  ClientBatchOutcome maybe_written = kTimedOut;
  maybe_written.maybe_written = true;
  const std::uint64_t a = producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle;
  const std::uint64_t b = producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 1).handle;
  producers.complete(a, maybe_written);
  producers.complete(b, kTimedOut);
  BatchCheck retry_a = producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 2);
  EXPECT_EQ(retry_a.verdict, BatchVerdict::kReject);
  EXPECT_EQ(retry_a.outcome.error, ErrorCode::kRequestTimedOut);
  EXPECT_TRUE(retry_a.outcome.maybe_written);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 3).verdict, BatchVerdict::kReject) << "and again";
  // b was not appended: the sequence goes back to just after a, not before it.
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 4).outcome.error, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 5).verdict, BatchVerdict::kAppend);
}

TEST(ClientDedupOrder, RewindAcrossTheSequenceWrap) {
  ClientProducers producers(ClientProducersConfig{});
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 0, kMax - 4, kMax}, 1).handle, kWritten);
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 2).handle, kTimedOut);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 3).outcome.error, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 4).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(producers.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 5).verdict, BatchVerdict::kAppend);
}

}  // namespace
}  // namespace pp
