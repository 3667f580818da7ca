// The idempotent clients' dedup state taken as a snapshot and restored into a
// new ClientProducers, as after a restart (docs/design/SPOOL.md, "Client
// producers"): a retried batch is a duplicate answered with its stored
// answer, an out-of-order one is refused as before, batches spooled after
// the snapshot are acknowledged duplicates, and no producer id handed out
// before the restart is handed out again.
#include <gtest/gtest.h>

#include "proxy/frontend/client_producers.h"

namespace pp {
namespace {

constexpr std::int64_t kPid = 7000;

ClientBatchOutcome acked(std::int64_t offset) {
  return ClientBatchOutcome{ErrorCode::kNone, offset, 55, 3, {}};
}

// Producer kPid on t/0: batches 0-4 and 5-9 acknowledged (offsets 100, 200),
// 10-14 in flight.
std::uint64_t fill(ClientProducers& p) {
  p.complete(p.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle, acked(100));
  p.complete(p.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 2).handle, acked(200));
  return p.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 3).handle;
}

TEST(ClientProducersRestore, ARetryIsADuplicateWithItsStoredAnswer) {
  ClientProducers before(ClientProducersConfig{});
  fill(before);
  ClientProducers after(ClientProducersConfig{});
  after.restore(before.snapshot(), {}, 10);
  const BatchCheck retry = after.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 11);
  ASSERT_EQ(retry.verdict, BatchVerdict::kDuplicateAcked);
  EXPECT_EQ(retry.outcome.base_offset, 200);
  EXPECT_EQ(retry.outcome.log_append_time_ms, 55);
  EXPECT_EQ(retry.outcome.log_start_offset, 3);
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 11).outcome.base_offset, 100);
}

TEST(ClientProducersRestore, OutOfOrderAndOldEpochsAreRefusedAsBefore) {
  ClientProducers before(ClientProducersConfig{});
  const std::uint64_t in_flight = fill(before);
  before.complete(in_flight, acked(300));
  ClientProducers after(ClientProducersConfig{});
  after.restore(before.snapshot(), {}, 10);
  const BatchCheck gap = after.check("t", 0, ClientBatch{kPid, 0, 20, 24}, 11);
  EXPECT_EQ(gap.verdict, BatchVerdict::kReject);
  EXPECT_EQ(gap.outcome.error, ErrorCode::kOutOfOrderSequenceNumber);
  // Rule 5 would have appended it: without the state a restart forgets.
  ClientProducers forgetful(ClientProducersConfig{});
  EXPECT_EQ(forgetful.check("t", 0, ClientBatch{kPid, 0, 20, 24}, 11).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 15, 19}, 12).verdict, BatchVerdict::kAppend);
}

TEST(ClientProducersRestore, BatchesSpooledAfterTheSnapshotAreAcknowledgedDuplicates) {
  ClientProducers before(ClientProducersConfig{});
  fill(before);  // 10-14 in flight when the snapshot is taken
  const ClientProducersSnapshot snapshot = before.snapshot();
  ASSERT_EQ(snapshot.producers.size(), 1U);
  ASSERT_EQ(snapshot.producers[0].partitions[0].batches.back().state, ClientProducersSnapshot::State::kPending);
  ClientProducers after(ClientProducersConfig{});
  after.restore(snapshot,
                {DurableClientBatch{"t", 0, ClientBatch{kPid, 0, 10, 14}},
                 DurableClientBatch{"t", 0, ClientBatch{kPid, 0, 15, 19}},
                 DurableClientBatch{"t", 0, ClientBatch{kPid, 0, 0, 4}},  // behind: already covered
                 DurableClientBatch{"u", 2, ClientBatch{kPid + 1, 3, 40, 41}}},
                10);
  for (const auto& [topic, partition, batch] :
       std::vector<std::tuple<std::string, int, ClientBatch>>{{"t", 0, ClientBatch{kPid, 0, 10, 14}},
                                                              {"t", 0, ClientBatch{kPid, 0, 15, 19}},
                                                              {"u", 2, ClientBatch{kPid + 1, 3, 40, 41}}}) {
    const BatchCheck c = after.check(topic, partition, batch, 11);
    EXPECT_EQ(c.verdict, BatchVerdict::kDuplicateAcked) << batch.first_sequence;
    EXPECT_EQ(c.outcome.base_offset, -1);
  }
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 11).outcome.base_offset, 100);
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 20, 20}, 12).verdict, BatchVerdict::kAppend);
  EXPECT_EQ(after.check("u", 2, ClientBatch{kPid + 1, 2, 0, 0}, 12).outcome.error, ErrorCode::kInvalidProducerEpoch);
}

TEST(ClientProducersRestore, APendingBatchNoEntryHoldsIsNeverAppendedAgain) {
  ClientProducers before(ClientProducersConfig{});
  fill(before);
  ClientProducers after(ClientProducersConfig{});
  after.restore(before.snapshot(), {}, 10);
  const BatchCheck retry = after.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 11);
  EXPECT_EQ(retry.verdict, BatchVerdict::kReject);
  EXPECT_EQ(retry.outcome.error, ErrorCode::kRequestTimedOut);
  // The client, answered before the crash, goes on.
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 15, 19}, 12).verdict, BatchVerdict::kAppend);
}

TEST(ClientProducersRestore, FailedBatchesAndBumpsSurvive) {
  ClientProducersConfig config;
  config.first_producer_id = 100;
  ClientProducers before(config);
  const InitProducerIdAnswer id = before.init_producer_id(-1, -1, 1);
  before.complete(before.check("t", 0, ClientBatch{id.producer_id, 0, 0, 0}, 1).handle, acked(1));
  before.complete(before.check("t", 0, ClientBatch{id.producer_id, 0, 1, 1}, 1).handle,
                  ClientBatchOutcome{ErrorCode::kNotEnoughReplicas, -1, -1, -1, "down"});
  const InitProducerIdAnswer bumped = before.init_producer_id(id.producer_id, 0, 2);
  ASSERT_EQ(bumped.epoch, 1);
  ClientProducers after(config);
  after.restore(before.snapshot(), {}, 10);
  // The retried bump gets the same answer; the failed batch is sent again.
  const InitProducerIdAnswer again = after.init_producer_id(id.producer_id, 0, 11);
  EXPECT_EQ(again.producer_id, id.producer_id);
  EXPECT_EQ(again.epoch, 1);
  EXPECT_EQ(after.check("t", 0, ClientBatch{id.producer_id, 0, 1, 1}, 11).verdict, BatchVerdict::kAppend);
}

TEST(ClientProducersRestore, AFailedBatchWhoseRetryWasSpooledLetsTheNextOneThrough) {
  ClientProducers before(ClientProducersConfig{});
  before.complete(before.check("t", 0, ClientBatch{kPid, 0, 0, 4}, 1).handle, acked(100));
  before.complete(before.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 1).handle,
                  ClientBatchOutcome{ErrorCode::kNotEnoughReplicas, -1, -1, -1, "full"});
  ClientProducers after(ClientProducersConfig{});
  after.restore(before.snapshot(), {DurableClientBatch{"t", 0, ClientBatch{kPid, 0, 5, 9}}}, 10);
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 5, 9}, 11).verdict, BatchVerdict::kDuplicateAcked);
  EXPECT_EQ(after.check("t", 0, ClientBatch{kPid, 0, 10, 14}, 11).verdict, BatchVerdict::kAppend);
}

TEST(ClientProducersRestore, NoIdHandedOutBeforeIsHandedOutAgain) {
  ClientProducersConfig config;
  config.first_producer_id = 100;
  ClientProducers before(config);
  const ClientProducersSnapshot snapshot = before.snapshot();
  // Handed out after the snapshot, then the proxy dies.
  for (int i = 0; i < 3; ++i) before.init_producer_id(-1, -1, 1);
  ClientProducers after(config);
  after.restore(snapshot, {}, 10);
  const InitProducerIdAnswer fresh = after.init_producer_id(-1, -1, 11);
  EXPECT_EQ(fresh.producer_id, 100 + ClientProducers::kRestartIdStride);
  // Restored ids are skipped too.
  ClientProducersSnapshot with_owner = snapshot;
  with_owner.producers.push_back(
      ClientProducersSnapshot::Producer{100 + ClientProducers::kRestartIdStride, 0, false, {}});
  ClientProducers owned(config);
  owned.restore(with_owner, {}, 10);
  EXPECT_EQ(owned.init_producer_id(-1, -1, 11).producer_id, 101 + ClientProducers::kRestartIdStride);
}

}  // namespace
}  // namespace pp
