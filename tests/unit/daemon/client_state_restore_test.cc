// The idempotent clients' dedup state across a restart, through the spool
// (daemon/client_state_restore.h, docs/design/SPOOL.md, "Client producers"):
// a front end's ClientProducers acknowledges client batches once their
// records entries are durable (spool mode), the writer snapshots it in every
// segment's checkpoint, older segments are deleted, and a new
// ClientProducers restored from what recovery finds answers every retry as
// a duplicate and refuses what a broker would.
#include "daemon/client_state_restore.h"

#include <gtest/gtest.h>

#include "proxy/spool/spool_format.h"
#include "proxy/spool/spool_recovery.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp {
namespace {

constexpr std::int64_t kPid = 4242;

// A client's batch of `count` records at `base`, checked by `producers` and,
// when new, spooled with its client identity and acknowledged (offset -1)
// once durable, as the spool-mode sink does.
void produce(spool::testing::WriterHarness& h, ClientProducers& producers, const Bytes& batch, std::int32_t base,
             std::int32_t count) {
  const BatchCheck c = producers.check("t", 0, ClientBatch{kPid, 0, base, base + count - 1}, 1);
  ASSERT_EQ(c.verdict, BatchVerdict::kAppend);
  spool::RecordsEntry e = spool::testing::records_entry(batch, count);
  e.client_producer_id = kPid;
  e.client_producer_epoch = 0;
  e.client_base_sequence = base;
  bool durable = false;
  h.writer().append(e, [&producers, &durable, handle = c.handle](int status, spool::EntryId) {
    const ErrorCode error = status == 0 ? ErrorCode::kNone : ErrorCode::kNotEnoughReplicas;
    producers.complete(handle, ClientBatchOutcome{error, -1, -1, -1, {}});
    durable = status == 0;
  });
  for (int spins = 0; spins < 100000 && !durable; ++spins) uv_run(h.loop(), UV_RUN_ONCE);
  ASSERT_TRUE(durable);
}

TEST(ClientStateRestore, TheSnapshotConvertsBothWaysWhole) {
  ClientProducers producers(ClientProducersConfig{});
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 2, 0, 4}, 1).handle,
                     ClientBatchOutcome{ErrorCode::kNone, 10, 20, 30, {}});
  producers.complete(producers.check("t", 0, ClientBatch{kPid, 2, 5, 9}, 1).handle,
                     ClientBatchOutcome{ErrorCode::kRequestTimedOut, -1, -1, -1, "gone", false, true});
  producers.check("u", 1, ClientBatch{kPid, 2, 0, 0}, 1);
  const spool::ClientProducersEntry entry = to_spool_entry(producers.snapshot());
  Bytes encoded;
  spool::encode_entry(spool::Entry{9, 0, entry}, encoded);
  const auto decoded = spool::decode_entry_payload(ByteView(encoded).subspan(spool::kEntryFrameBytes));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(to_spool_entry(from_spool_entry(std::get<spool::ClientProducersEntry>(decoded->body))), entry);
  ASSERT_EQ(entry.producers.size(), 1U);
  ASSERT_EQ(entry.producers[0].partitions.size(), 2U);
  EXPECT_EQ(entry.producers[0].partitions[1].batches[0].state, spool::ClientBatchState::kPending);
  EXPECT_EQ(spool::encoded_size(entry), encoded.size());
}

TEST(ClientStateRestore, ASnapshotOverItsBoundLeavesProducersOut) {
  ClientProducers producers(ClientProducersConfig{});
  for (std::int64_t pid = 0; pid < 100; ++pid) producers.check("topic", 0, ClientBatch{pid, 0, 0, 0}, 1);
  const ClientProducersSnapshot snapshot = producers.snapshot();
  const std::size_t whole = spool::encoded_size(to_spool_entry(snapshot));
  const spool::ClientProducersEntry cut = to_spool_entry(snapshot, whole - 1);
  EXPECT_EQ(cut.producers.size(), 99U);
  EXPECT_LE(spool::encoded_size(cut), whole - 1);
  EXPECT_EQ(to_spool_entry(snapshot, whole).producers.size(), 100U);
}

// A kill -9 in spool mode: without the restore every retry below would be
// appended again (without state any sequence is taken).
TEST(ClientStateRestore, RetriesAfterARestartAreDuplicatesWithOlderSegmentsDeleted) {
  spool::testing::TempDir dir;
  spool::SpoolWriterConfig config;
  config.segment_bytes = 2048;
  config.fsync = spool::FsyncPolicy::kAlways;
  const Bytes batch = spool::testing::make_batch(2, 600);
  {
    spool::testing::WriterHarness h(dir.path(), config);
    ClientProducers producers(ClientProducersConfig{});
    persist_client_state(h.writer(), producers);
    for (std::int32_t i = 0; i < 8; ++i) {
      produce(h, producers, batch, 2 * i, 2);
    }
    // Delivered upstream, all but the last: their segments go.
    for (const spool::PendingRecords& r : h.writer().index().unresolved_records()) {
      if (r.client_base_sequence == 14) continue;
      h.append(spool::SequencedEntry{"t", 0, 1, 0, r.client_base_sequence, 2, spool::kNoEntry, {{r.id, 0, 2}}});
      h.run();
    }
    for (const spool::PendingBatch& b : h.writer().index().unresolved_batches()) {
      h.append(spool::ResolvedEntry{b.id, spool::Outcome::kAcknowledged, 0, 0});
    }
    h.run();
    h.append(spool::IdentityEntry{1, 0});
    h.run();
  }
  const auto recovered = spool::SpoolRecovery(dir.path(), spool::SpoolRecovery::Mode::kRepair).run();
  ASSERT_TRUE(recovered);
  ASSERT_LT(recovered->paths.size(), 8U);  // older segments were deleted
  ClientProducers restored(ClientProducersConfig{});
  EXPECT_EQ(restore_client_state(recovered->index, restored, 100), 1U);
  // The last five batches (the default retention) are duplicates, acknowledged.
  for (std::int32_t i = 3; i < 8; ++i) {
    const BatchCheck retry = restored.check("t", 0, ClientBatch{kPid, 0, 2 * i, 2 * i + 1}, 101);
    EXPECT_EQ(retry.verdict, BatchVerdict::kDuplicateAcked) << "batch " << i;
  }
  EXPECT_EQ(restored.check("t", 0, ClientBatch{kPid, 0, 20, 21}, 101).outcome.error,
            ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(restored.check("t", 0, ClientBatch{kPid, 0, 16, 17}, 101).verdict, BatchVerdict::kAppend);
}

}  // namespace
}  // namespace pp
