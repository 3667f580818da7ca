// The client producers snapshot in the spool (docs/design/SPOOL.md, "Client
// producers"): the writer puts a fresh one in every segment's checkpoint,
// the index keeps the last one and the idempotent clients' records entries
// after it, and recovery finds both whether the older segments were deleted
// or kept.
#include <gtest/gtest.h>

#include <filesystem>

#include "proxy/spool/spool_index.h"
#include "proxy/spool/spool_recovery.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp::spool {
namespace {

using testing::make_batch;
using testing::TempDir;
using testing::WriterHarness;

RecordsEntry client_records(const Bytes& batch, std::int32_t count, std::int64_t pid, std::int32_t base) {
  RecordsEntry e = testing::records_entry(batch, count);
  e.client_producer_id = pid;
  e.client_producer_epoch = 0;
  e.client_base_sequence = base;
  return e;
}

std::size_t segment_files(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) n += f.path().extension() == ".seg" ? 1 : 0;
  return n;
}

// Appends six two-record batches of client 77 (sequences 0-11) to segments of
// 2 KiB, so every entry starts a new segment with a checkpoint holding the
// snapshot `source` builds, the snapshot's next_producer_id counting the
// checkpoints. With `resolve`, all but the last are sequenced and
// acknowledged, so the older segments are deleted.
std::vector<EntryId> write_client_batches(const std::string& dir, bool resolve) {
  SpoolWriterConfig config;
  config.segment_bytes = 2048;
  config.fsync = FsyncPolicy::kAlways;
  WriterHarness h(dir, config);
  std::int64_t checkpoints = 0;
  h.writer().set_client_producers_source([&] { return ClientProducersEntry{++checkpoints, {}}; });
  const Bytes batch = make_batch(2, 600);
  std::vector<EntryId> ids;
  for (std::int32_t i = 0; i < 6; ++i) {
    const auto r = h.append(client_records(batch, 2, 77, 2 * i));
    h.run();
    ids.push_back(h.result(r).id);
  }
  for (std::size_t i = 0; resolve && i + 1 < ids.size(); ++i) {
    const auto s = h.append(
        SequencedEntry{"t", 0, 1, 0, static_cast<std::int32_t>(2 * i), 2, kNoEntry, {RecordRange{ids[i], 0, 2}}});
    h.run();
    h.append(ResolvedEntry{h.result(s).id, Outcome::kAcknowledged, 0, static_cast<std::int64_t>(i)});
    h.run();
  }
  h.append(IdentityEntry{1, 0});  // a commit that runs the deletions queued
  h.run();
  return ids;
}

TEST(SpoolClientProducers, TheLastSnapshotSurvivesTheDeletionOfOlderSegments) {
  TempDir dir;
  const std::vector<EntryId> ids = write_client_batches(dir.path(), /*resolve=*/true);
  EXPECT_LT(segment_files(dir.path()), 6U);
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  const SpoolIndex& index = recovered->index;
  ASSERT_TRUE(index.client_producers());
  // The last segment started with the last snapshot: only later client
  // records are kept beside it, and no earlier snapshot is what counts.
  EXPECT_GT(index.client_producers()->next_producer_id, 1);
  EXPECT_GT(index.client_producers_id(), ids[4]);
  for (const ClientRecord& r : index.client_records()) EXPECT_GT(r.id, index.client_producers_id());
}

TEST(SpoolClientProducers, WithOlderSegmentsKeptTheLastSnapshotStillWins) {
  TempDir dir;
  const std::vector<EntryId> ids = write_client_batches(dir.path(), /*resolve=*/false);
  EXPECT_GE(segment_files(dir.path()), 6U);
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  const SpoolIndex& index = recovered->index;
  ASSERT_TRUE(index.client_producers());
  EXPECT_GT(index.client_producers_id(), ids[4]);
  // Every client records entry is still owed, the earlier ones before the snapshot.
  std::size_t before_snapshot = 0;
  for (const PendingRecords& r : index.unresolved_records()) {
    EXPECT_EQ(r.client_producer_id, 77);
    before_snapshot += r.id < index.client_producers_id() ? 1 : 0;
  }
  EXPECT_GE(before_snapshot, 5U);
}

TEST(SpoolClientProducers, WithoutASourceNoSnapshotIsWrittenAndEveryClientRecordIsKept) {
  TempDir dir;
  {
    WriterHarness h(dir.path());
    const Bytes batch = make_batch(2);
    h.append(client_records(batch, 2, 5, 0));
    h.append(client_records(batch, 2, 5, 2));
    h.append(testing::records_entry(batch, 2));  // a client without an identity
    h.run();
  }
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  EXPECT_FALSE(recovered->index.client_producers());
  const std::vector<ClientRecord> records = recovered->index.client_records();
  ASSERT_EQ(records.size(), 2U);
  EXPECT_EQ(records[1].base_sequence, 2);
}

TEST(SpoolClientProducers, VoidedAndFailedClientRecordsAreLeftOutAndThePerPartitionBoundHolds) {
  const Bytes batch = make_batch(2);
  SpoolIndex index;
  EntryId id = 1;
  auto apply = [&](EntryBody body) {
    index.apply(Entry{id, 0, std::move(body)}, EntryLocation{1, 36, 10});
    return id++;
  };
  const EntryId voided = apply(client_records(batch, 2, 5, 0));
  const EntryId failed = apply(client_records(batch, 2, 5, 2));
  const EntryId kept = apply(client_records(batch, 2, 5, 4));
  const EntryId seq = apply(SequencedEntry{"t", 0, 1, 0, 0, 2, kNoEntry, {RecordRange{failed, 0, 2}}});
  apply(ResolvedEntry{voided, Outcome::kVoid, 0, -1});
  apply(ResolvedEntry{seq, Outcome::kFailed, 2, -1});
  ASSERT_EQ(index.client_records().size(), 1U);
  EXPECT_EQ(index.client_records()[0].id, kept);
  for (std::int32_t i = 0; i < 100; ++i) apply(client_records(batch, 2, 5, 6 + 2 * i));
  const std::vector<ClientRecord> records = index.client_records();
  ASSERT_EQ(records.size(), SpoolIndex::kClientRecordsPerPartition);
  EXPECT_EQ(records.back().base_sequence, 6 + 2 * 99);
  // A snapshot covers everything before it.
  apply(ClientProducersEntry{3, {}});
  EXPECT_TRUE(index.client_records().empty());
}

}  // namespace
}  // namespace pp::spool
