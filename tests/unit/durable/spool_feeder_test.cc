// SpoolFeeder over a real SpoolWriter and the real IdempotentProducer behind
// a scripted upstream: what it owes is what the spool's index still holds
// unsequenced in the range pushed, read at each entry's turn, so an entry
// partly in a batch is fed from its first unsequenced record and one failed
// meanwhile is not fed at all.
#include "proxy/durable/spool_feeder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "proxy/durable/spooled_run.h"
#include "tests/unit/durable/durable_harness.h"

namespace pp::durable {
namespace {

using spool::testing::TempDir;
using testing::deliver;
using testing::DurableHarness;
using testing::values_of;
using testing::values_run;

// Appends `body` and waits for its commit; its entry id.
spool::EntryId append_durable(DurableHarness& h, const spool::EntryBody& body) {
  spool::EntryId id = spool::kNoEntry;
  bool done = false;
  EXPECT_TRUE(h.writer().append(body, [&](int status, spool::EntryId got) {
    EXPECT_EQ(status, 0);
    id = got;
    done = true;
  }));
  h.spin([&] { return done; });
  return id;
}

spool::EntryId spool_run(DurableHarness& h, const std::string& tag, int count) {
  const RecordRun run = values_run(tag, count);
  const Bytes batch = encode_run_batch(run);
  return append_durable(h, records_entry_for("t", 0, run, batch));
}

void fail_entry(DurableHarness& h, spool::EntryId id) {
  spool::ResolvedEntry failed;
  failed.target = id;
  failed.outcome = spool::Outcome::kFailed;
  append_durable(h, failed);
}

// Descriptors of this process open on the file `path`.
int fds_on(const std::string& path) {
  int n = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(fd.path(), ec).string() == path && !ec) ++n;
  }
  return n;
}

// Descriptors of this process open on files of `dir` that were deleted.
int deleted_fds_in(const std::string& dir) {
  int n = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.starts_with(dir) && target.ends_with(" (deleted)")) ++n;
  }
  return n;
}

TEST(SpoolFeeder, FeedsWhatTheIndexStillOwesFromItsFirstUnsequencedRecord) {
  TempDir dir;
  DurableHarness h(dir.path());
  h.start_producer();
  const spool::EntryId a = spool_run(h, "a", 3);
  const spool::EntryId b = spool_run(h, "b", 2);
  const spool::EntryId c = spool_run(h, "c", 2);
  // A's first two records are in a batch already (as after a restart whose
  // replay resends that batch); B was failed for good.
  spool::SequencedEntry batch;
  batch.topic = "t";
  batch.producer_id = 1000;
  batch.producer_epoch = 0;
  batch.record_count = 2;
  batch.ranges = {spool::RecordRange{a, 0, 2}};
  append_durable(h, batch);
  spool::ResolvedEntry failed;
  failed.target = b;
  failed.outcome = spool::Outcome::kFailed;
  append_durable(h, failed);

  SpoolFeeder feeder(h.loop(), h.writer(), h.producer());
  EXPECT_TRUE(feeder.empty());
  // What replay and the sink hand it: ids, the item's own first record not
  // trusted over the index.
  for (const spool::EntryId id : {a, b, c}) feeder.push(FeedItem{id, "t", 0, 0});
  EXPECT_FALSE(feeder.empty());
  EXPECT_EQ(feeder.backlog(), 2U) << "B is owed no more";

  const std::vector<std::string> delivered = deliver(h, 3);
  EXPECT_EQ(delivered, (std::vector<std::string>{"a-2", "c-0", "c-1"}));
  EXPECT_EQ(feeder.fed(), 2U);
  EXPECT_TRUE(feeder.empty());
  EXPECT_EQ(feeder.backlog(), 0U);

  // A later push after the feeder emptied starts a new range at that id.
  const spool::EntryId d = spool_run(h, "d", 1);
  feeder.push(d);
  h.spin([&] { return feeder.empty(); });
  EXPECT_EQ(feeder.fed(), 3U);
}

TEST(SpoolFeeder, ReadsARunOfOwedEntriesInOneJobSkippingResolvedOnes) {
  TempDir dir;
  DurableHarness h(dir.path());
  h.start_producer();
  std::vector<spool::EntryId> ids;
  ids.reserve(6);
  for (int i = 0; i < 6; ++i) ids.push_back(spool_run(h, std::string(1, static_cast<char>('a' + i)), 2));
  fail_entry(h, ids[1]);
  fail_entry(h, ids[4]);

  SpoolFeeder feeder(h.loop(), h.writer(), h.producer());
  for (const spool::EntryId id : ids) feeder.push(id);
  EXPECT_EQ(feeder.jobs(), 1U) << "the first push started a job for A";
  h.spin([&] { return feeder.empty(); });
  EXPECT_TRUE(feeder.empty());
  EXPECT_EQ(feeder.jobs(), 2U) << "A, then C, D and F (owed by then, in one segment) in one job";
  EXPECT_EQ(feeder.fed(), 4U);
  EXPECT_EQ(deliver(h, 8), (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1", "d-0", "d-1", "f-0", "f-1"}));
  h.spin([&] { return deleted_fds_in(dir.path()) == 0; });
}

TEST(SpoolFeeder, KeepsItsSegmentOpenAcrossJobsAndClosesItOnceTheSegmentIsDeleted) {
  TempDir dir;
  spool::SpoolWriterConfig small;
  small.segment_bytes = 4096;  // holds A and B (40 records each), not C too
  // Half the budget is less than one entry of 40 records.
  DurableHarness h(dir.path(), small, 256);
  h.start_producer();
  // A and B in one segment; C, larger than a segment, in the next.
  const RecordRun run_a = values_run("a", 40);
  const RecordRun run_b = values_run("b", 40);
  const Bytes batch_a = encode_run_batch(run_a);
  const Bytes batch_b = encode_run_batch(run_b);
  spool::EntryId a = spool::kNoEntry;
  spool::EntryId b = spool::kNoEntry;
  h.writer().append(records_entry_for("t", 0, run_a, batch_a), [&](int, spool::EntryId id) { a = id; });
  h.writer().append(records_entry_for("t", 0, run_b, batch_b), [&](int, spool::EntryId id) { b = id; });
  h.spin([&] { return a != spool::kNoEntry && b != spool::kNoEntry; });
  const spool::EntryId c = spool_run(h, "c", 400);
  const std::uint64_t segment = h.writer().index().records(a)->location.segment;
  ASSERT_EQ(segment, h.writer().index().records(b)->location.segment);
  ASSERT_NE(segment, h.writer().index().records(c)->location.segment);
  const std::string path = *h.writer().segment_path(segment);

  SpoolFeeder feeder(h.loop(), h.writer(), h.producer());
  for (const spool::EntryId id : {a, b, c}) feeder.push(id);
  h.spin([&] { return feeder.fed() == 1; });
  ASSERT_EQ(feeder.fed(), 1U);
  ASSERT_FALSE(SpoolFeeder::room_for_durable(h.producer().memory_budget()));
  h.spin([] { return false; }, std::chrono::milliseconds(50));
  EXPECT_EQ(feeder.jobs(), 1U) << "B did not fit in the first job and waits for room";
  EXPECT_EQ(fds_on(path), 1) << "the segment stays open while B, next in it, waits";

  // Between jobs everything in the segment is resolved and it is deleted:
  // its fd is closed although the budget is still full.
  fail_entry(h, a);
  fail_entry(h, b);
  h.spin([&] {
    spool_run(h, "x", 1);  // commits, which delete resolved segments
    return h.writer().segment_path(segment) == nullptr && fds_on(path) == 0 && deleted_fds_in(dir.path()) == 0;
  });
  EXPECT_EQ(h.writer().segment_path(segment), nullptr);
  EXPECT_EQ(fds_on(path), 0);
  EXPECT_EQ(deleted_fds_in(dir.path()), 0) << "no fd kept on a deleted segment";
  EXPECT_EQ(feeder.jobs(), 1U);

  // Room again: B (failed) is skipped, C read from its own segment.
  const auto delivered = deliver(h, 440);
  h.spin([&] { return feeder.empty(); });
  EXPECT_EQ(delivered.size(), 440U);
  EXPECT_EQ(delivered.back(), "c-399");
  EXPECT_EQ(feeder.fed(), 2U);
  EXPECT_EQ(feeder.jobs(), 2U);
}

}  // namespace
}  // namespace pp::durable
