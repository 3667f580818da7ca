// SpoolingSink over a real SpoolWriter in a temporary directory and the real
// IdempotentProducer behind a scripted upstream: a spooled run is answered
// with offset -1 only once its entry is durable, and reaches the upstream
// after; an upstream-mode run waits for the upstream, and an idempotent
// client's one is journaled first; a full spool refuses
// with a retriable error, later, never inside submit(); over the memory
// budget, runs stay on disk and the feeder brings them back in order as the
// budget frees.
#include "proxy/durable/spooling_sink.h"

#include <gtest/gtest.h>

#include "proxy/durable/spool_journal.h"
#include "proxy/durable/spooled_run.h"
#include "proxy/spool/entry_reader.h"
#include "tests/unit/durable/durable_harness.h"

namespace pp::durable {
namespace {

using spool::testing::TempDir;
using testing::deliver;
using testing::DurableHarness;
using testing::values_of;
using testing::values_run;

struct Sinks {
  explicit Sinks(DurableHarness& h)
      : feeder(h.loop(), h.writer(), h.producer()),
        sink(h.loop(), h.writer(), h.producer(), feeder, [](const std::string& t) { return t != "up"; }) {}
  SpoolFeeder feeder;
  SpoolingSink sink;
};

TEST(SpoolingSink, AnswersOnceDurableWithOffsetMinusOneThenDelivers) {
  TempDir dir;
  DurableHarness h(dir.path());
  h.start_producer();
  Sinks s(h);
  std::optional<RunResult> result;
  RecordRun run = values_run("a", 3);
  run.client = RunClient{-1, 77, 2, 40};
  s.sink.submit("t", 0, std::move(run), [&](const RunResult& r) { result = r; });
  EXPECT_FALSE(result) << "answered inside submit(), before the commit";
  h.spin([&] { return result.has_value(); });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error, ErrorCode::kNone);
  EXPECT_EQ(result->base_offset, -1);

  // The entry is durable, with the client's identity and acks, its batch
  // holding the run's records.
  const auto owed = h.writer().index().unresolved_records();
  ASSERT_EQ(owed.size(), 1U);
  EXPECT_EQ(owed[0].client_producer_id, 77);
  EXPECT_EQ(owed[0].client_producer_epoch, 2);
  EXPECT_EQ(owed[0].client_base_sequence, 40);
  EXPECT_EQ(owed[0].acks, -1);
  auto loaded = spool::read_entry(*h.writer().segment_path(owed[0].location.segment), owed[0].location, owed[0].id);
  ASSERT_TRUE(loaded) << loaded.error();
  auto back = run_from_entry(std::move(*loaded), 0);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->records.size(), 3U);
  EXPECT_EQ(back->durable_entry, owed[0].id);

  // Then the producer sends it upstream.
  h.producer().poll();
  auto sent = h.upstream().take_with("t", 0);
  ASSERT_EQ(sent.batches.size(), 1U);
  EXPECT_EQ(values_of(sent.batches[0]), (std::vector<std::string>{"a-0", "a-1", "a-2"}));
  pp::testing::ScriptedUpstream::answer(sent, [](const auto&) { return pp::testing::PartitionAnswer{}; });
}

TEST(SpoolingSink, UpstreamModeTopicsPassStraightThrough) {
  TempDir dir;
  DurableHarness h(dir.path());
  h.start_producer({"up"});
  Sinks s(h);
  std::optional<RunResult> result;
  s.sink.submit("up", 0, values_run("u", 2), [&](const RunResult& r) { result = r; });
  EXPECT_EQ(s.sink.passthrough_in_flight(), 1U);
  h.producer().poll();
  h.spin([] { return false; }, std::chrono::milliseconds(50));
  EXPECT_FALSE(result) << "answered before the upstream";
  EXPECT_TRUE(h.writer().index().unresolved_records().empty()) << "an upstream-mode run was spooled";
  auto sent = h.upstream().take_with("up", 0);
  pp::testing::PartitionAnswer ok;
  ok.base_offset = 42;
  pp::testing::ScriptedUpstream::answer(sent, [&](const auto&) { return ok; });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->base_offset, 42);
  EXPECT_EQ(s.sink.passthrough_in_flight(), 0U);
}

// An idempotent client's run in upstream mode: journaled before it goes
// upstream, so a restart can replay it and recognise the client's retry,
// but answered only with the upstream's outcome.
TEST(SpoolingSink, UpstreamModeIdempotentRunsAreJournaledAndAnsweredByTheUpstream) {
  TempDir dir;
  DurableHarness h(dir.path());
  SpoolJournal journal(h.loop(), h.writer());
  h.producer().set_journal(&journal);
  h.start_producer({"up"});
  Sinks s(h);
  std::optional<RunResult> result;
  RecordRun run = values_run("i", 2);
  run.client = RunClient{-1, 77, 0, 10};
  s.sink.submit("up", 0, std::move(run), [&](const RunResult& r) { result = r; });
  EXPECT_EQ(s.sink.passthrough_in_flight(), 0U) << "a journaled run is not lost at a drain deadline";
  h.spin([&] { return !h.writer().index().unresolved_records().empty(); });
  const auto owed = h.writer().index().unresolved_records();
  ASSERT_EQ(owed.size(), 1U) << "not journaled";
  EXPECT_EQ(owed[0].client_producer_id, 77);
  EXPECT_EQ(owed[0].client_base_sequence, 10);
  h.spin(
      [&] {
        h.producer().poll();
        return !h.upstream().outstanding.empty();
      },
      std::chrono::seconds(5));
  EXPECT_FALSE(result) << "answered before the upstream";
  auto sent = h.upstream().take_with("up", 0);
  ASSERT_EQ(sent.batches.size(), 1U);
  EXPECT_EQ(values_of(sent.batches[0]), (std::vector<std::string>{"i-0", "i-1"}));
  pp::testing::PartitionAnswer ok;
  ok.base_offset = 42;
  pp::testing::ScriptedUpstream::answer(sent, [&](const auto&) { return ok; });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error, ErrorCode::kNone);
  EXPECT_EQ(result->base_offset, 42) << "the upstream's offset, not the spool's -1";
  h.spin([&] { return h.writer().index().unresolved_records().empty(); });
  EXPECT_TRUE(h.writer().index().unresolved_records().empty()) << "the acknowledgement did not resolve the entry";
  h.producer().set_journal(nullptr);
}

// Over the memory budget an upstream-mode idempotent run waits on disk like
// a spooled one, and its client still hears the upstream's outcome, in
// order with the runs before it.
TEST(SpoolingSink, UpstreamModeRunsWaitingOnDiskAreAnsweredByTheUpstream) {
  TempDir dir;
  DurableHarness h(dir.path(), {}, 4096);
  h.start_producer({"up"});
  Sinks s(h);
  constexpr int kRuns = 12;
  std::vector<std::int64_t> offsets(kRuns, -2);
  for (int i = 0; i < kRuns; ++i) {
    auto values = std::make_shared<std::vector<std::string>>(1, std::to_string(i) + std::string(1000, '.'));
    RecordRun run = pp::testing::run_of(values);
    run.client = RunClient{-1, 5, 0, i};
    s.sink.submit("up", 0, std::move(run), [&offsets, i](const RunResult& r) {
      EXPECT_EQ(r.error, ErrorCode::kNone);
      offsets[static_cast<std::size_t>(i)] = r.base_offset;
    });
  }
  const std::vector<std::string> delivered = deliver(h, kRuns, "up", 100);
  EXPECT_GT(s.feeder.fed(), 0U) << "nothing waited on disk";
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(kRuns));
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_EQ(std::stoi(delivered[static_cast<std::size_t>(i)]), i) << "order at " << i;
    EXPECT_EQ(offsets[static_cast<std::size_t>(i)], 100 + i) << "answer of run " << i;
  }
}

TEST(SpoolingSink, AFullSpoolRefusesRetriablyAndLater) {
  TempDir dir;
  spool::SpoolWriterConfig config;
  config.max_bytes = 1U << 20;
  config.segment_bytes = 64U << 10;
  DurableHarness h(dir.path(), config);
  h.start_producer();
  Sinks s(h);
  auto big = std::make_shared<std::vector<std::string>>(1, std::string(2U << 20, 'x'));
  std::optional<RunResult> result;
  s.sink.submit("t", 0, pp::testing::run_of(big), [&](const RunResult& r) { result = r; });
  EXPECT_FALSE(result) << "answered inside submit()";
  h.spin([&] { return result.has_value(); });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error, ErrorCode::kNotEnoughReplicas);
  EXPECT_TRUE(result->withdrawn);
  EXPECT_TRUE(h.writer().index().unresolved_records().empty());
}

// A budget of 4 KiB: the first runs fill their half of it, the rest wait on
// disk only and come back, in order, as the upstream acknowledges; runs
// spooled while some wait on disk queue behind them even when the budget
// has room again.
TEST(SpoolingSink, OverTheBudgetRunsWaitOnDiskAndComeBackInOrder) {
  TempDir dir;
  DurableHarness h(dir.path(), {}, 4096);
  h.start_producer();
  Sinks s(h);
  constexpr int kRuns = 20;
  int answered = 0;
  auto submit = [&](int i) {
    auto values = std::make_shared<std::vector<std::string>>(1, std::to_string(i) + std::string(1000, '.'));
    s.sink.submit("t", 0, pp::testing::run_of(values), [&](const RunResult& r) {
      EXPECT_EQ(r.error, ErrorCode::kNone);
      ++answered;
    });
  };
  std::vector<int> delivered;
  std::int64_t offset = 0;
  auto answer_sent = [&] {
    h.producer().poll();
    while (!h.upstream().outstanding.empty()) {
      auto sent = h.upstream().take_with("t", 0);
      for (const auto& b : sent.batches) {
        for (const auto& v : values_of(b)) delivered.push_back(std::stoi(v));
      }
      pp::testing::ScriptedUpstream::answer(sent, [&](const auto& b) {
        pp::testing::PartitionAnswer ok;
        ok.base_offset = offset;
        offset += b.record_count;
        return ok;
      });
    }
  };
  for (int i = 0; i < kRuns / 2; ++i) submit(i);
  h.spin([&] { return answered == kRuns / 2; });
  ASSERT_EQ(answered, kRuns / 2) << "every client is answered from the spool, whatever the budget";
  EXPECT_GT(s.feeder.backlog(), 0U) << "nothing waited on disk";
  EXPECT_LE(h.producer().buffered_bytes(), 4096U + 2048U) << "memory beyond the budget and one entry";
  // The budget frees before the feeder has read anything back: what is
  // spooled now must still wait behind the backlog.
  answer_sent();
  for (int i = kRuns / 2; i < kRuns; ++i) submit(i);
  h.spin([&] { return answered == kRuns; });
  ASSERT_EQ(answered, kRuns);

  // The feeder reads on the threadpool; the producer sends on its poll.
  for (const std::string& v : deliver(h, kRuns - delivered.size(), "t", offset)) delivered.push_back(std::stoi(v));
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(kRuns));
  for (int i = 0; i < kRuns; ++i) EXPECT_EQ(delivered[static_cast<std::size_t>(i)], i) << "order at " << i;
  EXPECT_GT(s.feeder.fed(), 0U);
}

}  // namespace
}  // namespace pp::durable
