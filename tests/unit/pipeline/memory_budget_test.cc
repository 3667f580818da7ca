// The one memory budget (issue 14): charges, the low-water listener, and the
// pipeline's share of it (runs until they finish, built batches until they
// are acknowledged).
#include <gtest/gtest.h>

#include "proxy/pipeline/memory_uses.h"
#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

TEST(MemoryBudgetTest, ChargesAddUpByUseAndAreReturnedWhenDropped) {
  MemoryBudget budget(1000);
  {
    MemoryCharge frames = budget.charge(MemoryUse::kRequestFrames, 300);
    MemoryCharge batches = budget.charge(MemoryUse::kUpstreamBatches, 200);
    EXPECT_EQ(budget.used(), 500u);
    EXPECT_EQ(budget.used(MemoryUse::kRequestFrames), 300u);
    frames.set(700);
    EXPECT_EQ(budget.used(), 900u);
    MemoryCharge moved = std::move(frames);
    EXPECT_EQ(budget.used(), 900u) << "a move transfers, it does not double or drop";
    EXPECT_EQ(frames.bytes(), 0u);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    moved.set(100);
    EXPECT_EQ(budget.used(MemoryUse::kRequestFrames), 100u);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MemoryBudgetTest, TheListenerFiresOnceBackAtNinetyPercentAfterBeingOver) {
  MemoryBudget budget(1000);
  int fired = 0;
  budget.set_available_listener([&] { ++fired; });
  MemoryCharge a = budget.charge(MemoryUse::kDecodedRecords, 950);
  a.set(800);
  EXPECT_EQ(fired, 0) << "never over: nobody paused, nobody to wake";
  a.set(1000);
  EXPECT_TRUE(budget.over());
  a.set(950);
  EXPECT_EQ(fired, 0) << "still above the low-water mark";
  a.set(900);
  EXPECT_EQ(fired, 1);
  a.reset();
  EXPECT_EQ(fired, 1) << "once per time over";
}

TEST(MemoryBudgetTest, AFrameIsAdmittedOnlyIfItFitsWholeUnlessNothingElseIsHeldForRequests) {
  MemoryBudget budget(1000);
  MemoryCharge state = budget.charge(MemoryUse::kClientProducers, 100);
  EXPECT_TRUE(budget.admits(900));
  EXPECT_TRUE(budget.admits(5000)) << "larger than the budget, but never to fit better: taken alone";
  MemoryCharge run = budget.charge(MemoryUse::kDecodedRecords, 400);
  EXPECT_EQ(budget.room(), 500u);
  EXPECT_TRUE(budget.admits(500));
  EXPECT_FALSE(budget.admits(501)) << "admitted, it would cross the budget";
  EXPECT_FALSE(budget.admits(5000)) << "the run will give its memory back: wait for it";
}

TEST(MemoryBudgetTest, TheRoomListenerFiresOnceTheRoomWantedIsFreeOrNothingDrains) {
  MemoryBudget budget(1000);
  int fired = 0;
  budget.set_room_listener([&] { ++fired; });
  MemoryCharge run = budget.charge(MemoryUse::kDecodedRecords, 600);
  MemoryCharge batch = budget.charge(MemoryUse::kUpstreamBatches, 200);
  budget.want_room(500);
  budget.want_room(700);  // the least room anyone waits for is what counts
  batch.set(150);
  EXPECT_EQ(fired, 0) << "250 bytes of room, 500 wanted";
  run.set(350);
  EXPECT_EQ(fired, 1) << "500 bytes of room";
  batch.reset();
  EXPECT_EQ(fired, 1) << "once: a waiter that still lacks room asks again";

  MemoryCharge frame = budget.charge(MemoryUse::kRequestFrames, 600);
  budget.want_room(900);
  run.reset();
  EXPECT_EQ(fired, 2) << "too little room, but the pipeline holds nothing more to give back";
  EXPECT_EQ(budget.draining(), 0u);
}

TEST(MemoryBudgetTest, ReservedRoomIsNotAdmittedAndItsReleaseWakesWaiters) {
  MemoryBudget budget(1000);
  int fired = 0;
  budget.set_room_listener([&] { ++fired; });
  MemoryCharge run = budget.charge(MemoryUse::kDecodedRecords, 400);
  {
    MemoryBudget::RoomReservation parked = budget.reserve_room(800);
    EXPECT_EQ(budget.reserved(), 800u);
    EXPECT_FALSE(budget.admits(100)) << "600 bytes of room, all of them and more kept for the parked request";
    budget.want_room(100);
    MemoryBudget::RoomReservation moved = std::move(parked);
    EXPECT_EQ(budget.reserved(), 800u);
  }
  EXPECT_EQ(budget.reserved(), 0u);
  EXPECT_EQ(fired, 1) << "the reservation gone, the frame waiting beside it may fit";
  EXPECT_TRUE(budget.admits(600));
}

TEST(MemoryBudgetTest, AChargeMayOutliveItsBudget) {
  MemoryCharge survivor;
  {
    MemoryBudget budget(10);
    survivor = budget.charge(MemoryUse::kResponses, 5);
  }
  survivor.set(1);
  survivor.reset();
  SUCCEED() << "no use of a freed budget (ASan would say)";
}

class PipelineMemoryTest : public PipelineFixture {};

TEST_F(PipelineMemoryTest, ABuiltBatchIsChargedUntilAcknowledgedAndTheRunUntilItFinishes) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 3);
  const MemoryBudget& budget = producer->memory_budget();
  EXPECT_GT(budget.used(MemoryUse::kDecodedRecords), 0u);
  EXPECT_EQ(budget.used(MemoryUse::kUpstreamBatches), 0u) << "nothing built before it may be sent";
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const std::size_t batch_bytes = upstream.outstanding.front().batches[0].bytes.size();
  EXPECT_GE(budget.used(MemoryUse::kUpstreamBatches), batch_bytes)
      << "a stalled upstream holds built batches beside their runs: both count";
  EXPECT_LT(budget.used(MemoryUse::kUpstreamBatches), 2 * batch_bytes)
      << "a small batch's buffer is sized for its records, not for batch_bytes (1 MiB)";
  {
    auto sent = upstream.take();  // holds the request's done, and so the batch
    ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(0); });
  }
  poll();
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(PipelineMemoryTest, BuiltBatchesCountTowardsTheBudgetThatPausesClients) {
  config.buffer_memory_bytes = 4096;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  // Values under the borrowing size: the batch copies them.
  auto values = std::make_shared<std::vector<std::string>>(10, std::string(300, 'x'));
  producer->submit("t", 0, run_of(values), [](const RunResult&) {});
  EXPECT_FALSE(producer->over_memory_budget());
  poll();  // built: the run and its batch both held now
  EXPECT_TRUE(producer->over_memory_budget()) << "run 3000 bytes + batch 3000+ bytes > 4096";
}

// Large values stay in the run's storage: the batch borrows them (issue
// 17), so the budget sees them once, in the run, and the batch's own bytes
// are the header and the bytes around the values.
TEST_F(PipelineMemoryTest, BorrowedValuesAreNotChargedAgainInTheirBatch) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  auto values = std::make_shared<std::vector<std::string>>(10, std::string(1000, 'x'));
  bool done = false;
  producer->submit("t", 0, run_of(values), [&](const RunResult&) { done = true; });
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const SentBatch& sent = upstream.outstanding.front().batches[0];
  EXPECT_EQ(sent.borrowed.size(), 10u) << "each value where it lies";
  EXPECT_GT(sent.bytes.size(), 10'000u);
  const MemoryBudget& budget = producer->memory_budget();
  EXPECT_GT(budget.used(MemoryUse::kUpstreamBatches), 0u);
  EXPECT_LT(budget.used(MemoryUse::kUpstreamBatches), 1000u) << "the header and 10 records' framing, no value";
  {
    auto taken = upstream.take();
    ScriptedUpstream::answer(taken, [](const SentBatch&) { return ok(0); });
  }
  poll();
  EXPECT_TRUE(done);
  EXPECT_EQ(budget.used(), 0u);
}

// The front end counts a run's future copy into its upstream batch from
// decoding on (RecordRun::batch_bytes_reserved), since the client frame
// stays pinned beside that batch: building the batch hands the room over,
// so the budget sees the copy once, before and after it is made.
TEST_F(PipelineMemoryTest, ARunsReservedCopyBecomesItsBatchsCharge) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  // Values under the borrowing size: the batch copies them.
  auto values = std::make_shared<std::vector<std::string>>(10, std::string(400, 'x'));
  RecordRun run = run_of(values);
  const std::size_t views = run.size_bytes;
  run.upstream_bytes_bound = 10 * (400 + 40);  // an upper bound, as the front end computes it
  run.batch_bytes_reserved = run.upstream_bytes_bound;
  run.size_bytes += run.batch_bytes_reserved;
  bool done = false;
  producer->submit("t", 0, std::move(run), [&](const RunResult&) { done = true; });
  const MemoryBudget& budget = producer->memory_budget();
  EXPECT_EQ(budget.used(MemoryUse::kDecodedRecords), views + 10 * 440) << "the copy is counted ahead";
  const std::size_t before = budget.used();
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(budget.used(MemoryUse::kDecodedRecords), views) << "the reserved room went to the batch";
  EXPECT_GE(budget.used(MemoryUse::kUpstreamBatches), upstream.outstanding.front().batches[0].bytes.size());
  EXPECT_LE(budget.used(), before + record_batch_layout::kHeaderSize) << "not counted twice";
  {
    auto sent = upstream.take();
    ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(0); });
  }
  poll();
  EXPECT_TRUE(done);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace pp::testing
