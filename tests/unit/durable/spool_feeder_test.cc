// SpoolFeeder over a real SpoolWriter and the real IdempotentProducer behind
// a scripted upstream: what it owes is what the spool's index still holds
// unsequenced in the range pushed, read at each entry's turn, so an entry
// partly in a batch is fed from its first unsequenced record and one failed
// meanwhile is not fed at all.
#include "proxy/durable/spool_feeder.h"

#include <gtest/gtest.h>

#include "proxy/durable/spooled_run.h"
#include "tests/unit/durable/durable_harness.h"

namespace pp::durable {
namespace {

using spool::testing::TempDir;
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

  std::vector<std::string> delivered;
  for (int round = 0; round < 100 && delivered.size() < 3; ++round) {
    h.spin(
        [&] {
          h.producer().poll();
          return !h.upstream().outstanding.empty();
        },
        std::chrono::seconds(5));
    while (!h.upstream().outstanding.empty()) {
      auto sent = h.upstream().take_with("t", 0);
      for (const auto& s : sent.batches) {
        for (const auto& v : values_of(s)) delivered.push_back(v);
      }
      pp::testing::ScriptedUpstream::answer(sent, [](const auto&) { return pp::testing::PartitionAnswer{}; });
    }
  }
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

}  // namespace
}  // namespace pp::durable
