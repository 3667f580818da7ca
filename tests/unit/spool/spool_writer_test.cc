// The writer on a real loop over real files: entries come back from recovery
// as written; one fdatasync covers every append of a group; "always" syncs
// each; max_bytes refuses records at once; fully resolved segments are
// deleted oldest first, never one still owed.
#include "proxy/spool/spool_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "proxy/spool/entry_reader.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp::spool {
namespace {

using testing::CountingObserver;
using testing::make_batch;
using testing::records_entry;
using testing::TempDir;
using testing::WriterHarness;

std::size_t segment_files(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) n += f.path().extension() == ".seg" ? 1 : 0;
  return n;
}

TEST(SpoolWriter, WhatIsAcknowledgedIsWhatRecoveryYields) {
  TempDir dir;
  const Bytes batch_a = make_batch(3);
  const Bytes batch_b = make_batch(2, 40, 'w');
  EntryId a = kNoEntry;
  EntryId b = kNoEntry;
  EntryId seq = kNoEntry;
  {
    WriterHarness h(dir.path());
    ASSERT_TRUE(h.ok());
    const auto ia = h.append(records_entry(batch_a, 3, "t", 0));
    const auto ib = h.append(records_entry(batch_b, 2, "u", 1));
    h.append(IdentityEntry{500, 0});
    h.append(ClusterViewEntry{{TopicPartitions{"t", 2}, TopicPartitions{"u", 2}}});
    h.run();
    ASSERT_EQ(h.result(ia).status, 0);
    a = h.result(ia).id;
    b = h.result(ib).id;
    // Records of `a` sequenced as one batch, 2 of `b` left unsequenced.
    const auto is = h.append(SequencedEntry{"t", 0, 500, 0, 0, 3, kNoEntry, {RecordRange{a, 0, 3}}});
    h.run();
    seq = h.result(is).id;
    ASSERT_NE(seq, kNoEntry);
    EXPECT_EQ(h.observer().records, 5);
  }
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered) << recovered.error();
  const SpoolIndex& index = recovered->index;
  ASSERT_TRUE(index.identity());
  EXPECT_EQ(index.identity()->producer_id, 500);
  ASSERT_TRUE(index.cluster_view());
  EXPECT_EQ(index.cluster_view()->topics.size(), 2U);
  const auto batches = index.unresolved_batches();
  ASSERT_EQ(batches.size(), 1U);
  EXPECT_EQ(batches[0].id, seq);
  EXPECT_EQ(batches[0].batch.base_sequence, 0);
  const auto unsequenced = index.unsequenced_records();
  ASSERT_EQ(unsequenced.size(), 1U);
  EXPECT_EQ(unsequenced[0].id, b);
  EXPECT_EQ(unsequenced[0].topic, "u");
  EXPECT_EQ(recovered->report.torn_bytes, 0U);
}

TEST(SpoolWriter, OneFdatasyncCoversEveryAppendOfAGroup) {
  TempDir dir;
  SpoolWriterConfig config;
  config.fsync_interval_ms = 20;
  WriterHarness h(dir.path(), config);
  const Bytes batch = make_batch(1);
  // As many connections' appends handled in one loop iteration.
  for (int i = 0; i < 200; ++i) h.append(records_entry(batch, 1));
  h.run();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(h.result(static_cast<std::size_t>(i)).status, 0);
  ASSERT_EQ(h.observer().fsyncs.size(), 1U);
  EXPECT_EQ(h.observer().fsyncs[0], 200U);
}

TEST(SpoolWriter, AlwaysSyncsEachAppendOnItsOwn) {
  TempDir dir;
  SpoolWriterConfig config;
  config.fsync = FsyncPolicy::kAlways;
  WriterHarness h(dir.path(), config);
  const Bytes batch = make_batch(1);
  for (int i = 0; i < 10; ++i) h.append(records_entry(batch, 1));
  h.run();
  ASSERT_EQ(h.observer().fsyncs.size(), 10U);
  for (std::size_t n : h.observer().fsyncs) EXPECT_EQ(n, 1U);
}

TEST(SpoolWriter, RecordsOverMaxBytesAreRefusedAtOnceButResolutionsAreNot) {
  TempDir dir;
  SpoolWriterConfig config;
  config.max_bytes = 4096;
  WriterHarness h(dir.path(), config);
  const Bytes batch = make_batch(1, 1000);
  std::size_t accepted = 0;
  std::size_t first_refused = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    const auto r = h.append(records_entry(batch, 1));
    if (h.result(r).refused) {
      first_refused = r;
      break;
    }
    ++accepted;
  }
  EXPECT_EQ(accepted, 3U);  // 4096 bytes hold three 1 KiB entries and the segment header
  EXPECT_TRUE(h.result(first_refused).refused);
  h.run();
  const auto resolved = h.append(ResolvedEntry{h.result(0).id, Outcome::kFailed, 2, -1});
  EXPECT_FALSE(h.result(resolved).refused);
  h.run();
  EXPECT_EQ(h.result(resolved).status, 0);
}

TEST(SpoolWriter, ASegmentIsDeletedOnceEverythingInItIsResolvedAndNotBefore) {
  TempDir dir;
  SpoolWriterConfig config;
  config.segment_bytes = 2048;
  config.fsync = FsyncPolicy::kAlways;
  WriterHarness h(dir.path(), config);
  const Bytes batch = make_batch(2, 600);
  std::vector<EntryId> records;
  for (int i = 0; i < 6; ++i) {
    const auto r = h.append(records_entry(batch, 2));
    h.run();
    records.push_back(h.result(r).id);
  }
  const std::size_t before = segment_files(dir.path());
  ASSERT_GE(before, 3U);
  // Sequence and acknowledge all but the last records entry.
  for (std::size_t i = 0; i + 1 < records.size(); ++i) {
    const auto s = h.append(
        SequencedEntry{"t", 0, 1, 0, static_cast<std::int32_t>(2 * i), 2, kNoEntry, {RecordRange{records[i], 0, 2}}});
    h.run();
    h.append(ResolvedEntry{h.result(s).id, Outcome::kAcknowledged, 0, static_cast<std::int64_t>(i)});
    h.run();
  }
  // One more commit runs the deletions queued by the last one.
  h.append(IdentityEntry{1, 0});
  h.run();
  const std::size_t after = segment_files(dir.path());
  EXPECT_LT(after, before);
  EXPECT_EQ(h.observer().records, 2);
  h.close();
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  const auto left = recovered->index.unsequenced_records();
  ASSERT_EQ(left.size(), 1U);
  EXPECT_EQ(left[0].id, records.back());
  EXPECT_TRUE(recovered->index.unresolved_batches().empty());
  ASSERT_TRUE(recovered->index.identity());
}

TEST(SpoolWriter, ASupersedingBatchReplacesTheOldOneAndAFailedRunIsNotReplayed) {
  TempDir dir;
  WriterHarness h(dir.path());
  const Bytes batch = make_batch(4);
  const auto r1 = h.append(records_entry(batch, 4));
  const auto r2 = h.append(records_entry(batch, 4));
  h.run();
  const EntryId a = h.result(r1).id;
  const EntryId b = h.result(r2).id;
  const auto s1 = h.append(SequencedEntry{"t", 0, 1, 0, 0, 8, kNoEntry, {RecordRange{a, 0, 4}, RecordRange{b, 0, 4}}});
  h.run();
  // An epoch bump renumbers it.
  const auto s2 =
      h.append(SequencedEntry{"t", 0, 1, 1, 0, 8, h.result(s1).id, {RecordRange{a, 0, 4}, RecordRange{b, 0, 4}}});
  h.run();
  h.close();
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  const auto batches = recovered->index.unresolved_batches();
  ASSERT_EQ(batches.size(), 1U);
  EXPECT_EQ(batches[0].id, h.result(s2).id);
  EXPECT_EQ(batches[0].batch.producer_epoch, 1);
  EXPECT_TRUE(recovered->index.unsequenced_records().empty());
}

TEST(SpoolWriter, AnOwedRecordsEntryReadsBackAsWrittenAndNeverOnceChanged) {
  TempDir dir;
  const Bytes batch = make_batch(3, 100, 'r');
  {
    WriterHarness h(dir.path());
    h.append(records_entry(batch, 3, "orders", 5));
    h.run();
  }
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kReadOnly).run();
  ASSERT_TRUE(recovered);
  const auto owed = recovered->index.unsequenced_records();
  ASSERT_EQ(owed.size(), 1U);
  const std::string& path = recovered->paths.at(owed[0].location.segment);
  const auto loaded = read_entry(path, owed[0].location, owed[0].id);
  ASSERT_TRUE(loaded) << loaded.error();
  const auto& records = std::get<RecordsEntry>(loaded->entry.body);
  EXPECT_EQ(records.topic, "orders");
  EXPECT_EQ(records.partition, 5);
  EXPECT_TRUE(bytes_equal(records.batch, batch));
  EXPECT_FALSE(read_entry(path, owed[0].location, owed[0].id + 1)) << "another id is not this entry";

  // A byte of the batch changed on disk after recovery: refused, not delivered.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(owed[0].location.offset + owed[0].location.size - 10));
    f.put('X');
  }
  const auto changed = read_entry(path, owed[0].location, owed[0].id);
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().find("checksum"), std::string::npos) << changed.error();
}

}  // namespace
}  // namespace pp::spool
