// SpoolJournal over a real SpoolWriter: a batch's identity is durable when
// its callback says so, with the spool's entry id; resolutions, failed
// records and identities land as entries; and after a restart plan_replay
// rebuilds exactly the unresolved batches (identity, sequences, records)
// and then the records no batch had taken, from where the last batch ended.
#include "proxy/durable/spool_journal.h"

#include <gtest/gtest.h>

#include "proxy/durable/spool_replay.h"
#include "proxy/durable/spooled_run.h"
#include "tests/unit/durable/durable_harness.h"

namespace pp::durable {
namespace {

using spool::testing::TempDir;
using testing::DurableHarness;
using testing::values_run;

// Appends a Records entry for `run` and returns its id once durable.
spool::EntryId spool_run(DurableHarness& h, const RecordRun& run, const std::string& topic = "t") {
  const Bytes batch = encode_run_batch(run);
  spool::EntryId id = spool::kNoEntry;
  bool done = false;
  EXPECT_TRUE(h.writer().append(records_entry_for(topic, 0, run, batch), [&](int status, spool::EntryId i) {
    EXPECT_EQ(status, 0);
    id = i;
    done = true;
  }));
  h.spin([&] { return done; });
  return id;
}

JournalBatch batch_of(spool::EntryId records, std::int32_t first, std::int32_t count, std::int32_t base_sequence) {
  JournalBatch b;
  b.tp = TopicPartition{"t", 0};
  b.producer_id = ProducerId{1000};
  b.producer_epoch = ProducerEpoch{3};
  b.base_sequence = base_sequence;
  b.record_count = count;
  b.ranges = {JournalRange{records, first, count}};
  return b;
}

TEST(SpoolJournal, SequencedIsDurableWithItsEntryIdAndResolvedClearsIt) {
  TempDir dir;
  DurableHarness h(dir.path());
  SpoolJournal journal(h.loop(), h.writer());
  const spool::EntryId records = spool_run(h, values_run("a", 4));
  ASSERT_NE(records, spool::kNoEntry);
  journal.identity(ProducerId{1000}, ProducerEpoch{3});
  std::optional<JournalId> id;
  journal.sequenced(batch_of(records, 0, 4, 0), [&](JournalId i) { id = i; });
  EXPECT_FALSE(id) << "reported inside the call";
  h.spin([&] { return id.has_value(); });
  ASSERT_TRUE(id);
  ASSERT_NE(*id, kNoJournalId);
  const auto batches = h.writer().index().unresolved_batches();
  ASSERT_EQ(batches.size(), 1U);
  EXPECT_EQ(batches[0].id, *id);
  EXPECT_EQ(batches[0].batch.producer_epoch, 3);
  ASSERT_TRUE(h.writer().index().identity());
  EXPECT_EQ(h.writer().index().identity()->producer_id, 1000);

  journal.resolved(*id, JournalOutcome::kAcknowledged, ErrorCode::kNone, 17);
  h.spin([&] { return h.writer().index().unresolved_batches().empty(); });
  EXPECT_TRUE(h.writer().index().unresolved_batches().empty());
  EXPECT_TRUE(h.writer().index().unresolved_records().empty()) << "acknowledged records still owed";
}

TEST(SpoolJournal, RecordsFailedBeforeAnyBatchAreNotOwed) {
  TempDir dir;
  DurableHarness h(dir.path());
  SpoolJournal journal(h.loop(), h.writer());
  const spool::EntryId records = spool_run(h, values_run("f", 2));
  journal.records_failed(JournalRange{records, 0, 2}, ErrorCode::kTopicAuthorizationFailed);
  h.spin([&] { return h.writer().index().unresolved_records().empty(); });
  EXPECT_TRUE(h.writer().index().unresolved_records().empty());
}

TEST(SpoolReplay, RebuildsUnresolvedBatchesThenTheUnsequencedRest) {
  TempDir dir;
  spool::EntryId first = spool::kNoEntry;
  spool::EntryId second = spool::kNoEntry;
  JournalId batch_id = kNoJournalId;
  {
    DurableHarness h(dir.path());
    SpoolJournal journal(h.loop(), h.writer());
    first = spool_run(h, values_run("a", 5));
    second = spool_run(h, values_run("b", 2));
    journal.identity(ProducerId{1000}, ProducerEpoch{3});
    // Records 0-2 of the first entry in a batch sent and never answered.
    journal.sequenced(batch_of(first, 0, 3, 10), [&](JournalId i) { batch_id = i; });
    h.spin([&] { return batch_id != kNoJournalId; });
    ASSERT_NE(batch_id, kNoJournalId);
  }
  DurableHarness h(dir.path());
  const ReplayPlan plan = plan_replay(h.writer());
  EXPECT_TRUE(plan.problems.empty());
  ASSERT_EQ(plan.batches.size(), 1U);
  const RestoredBatch& b = plan.batches[0];
  EXPECT_EQ(b.journal_id, batch_id);
  EXPECT_EQ(b.producer_id.value, 1000);
  EXPECT_EQ(b.producer_epoch.value, 3);
  EXPECT_EQ(b.base_sequence, 10);
  EXPECT_EQ(b.record_count, 3);
  ASSERT_EQ(b.runs.size(), 1U);
  const RecordRun& run = b.runs[0].run;
  EXPECT_EQ(run.durable_entry, first);
  EXPECT_EQ(run.durable_first_record, 0);
  ASSERT_EQ(run.records.size(), 3U);
  EXPECT_EQ(std::string(run.records[2].value->begin(), run.records[2].value->end()), "a-2");

  ASSERT_EQ(plan.unsequenced.size(), 2U);
  EXPECT_EQ(plan.unsequenced[0].id, first);
  EXPECT_EQ(plan.unsequenced[0].first_record, 3) << "continues where its last batch ended";
  EXPECT_EQ(plan.unsequenced[1].id, second);
  EXPECT_EQ(plan.unsequenced[1].first_record, 0);
  EXPECT_EQ(plan.records, 3 + 2 + 2);
}

}  // namespace
}  // namespace pp::durable
