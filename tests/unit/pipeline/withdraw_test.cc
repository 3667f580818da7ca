// RecordSink::withdraw: a run its client gave up on (the request's deadline)
// leaves the accumulator unsent, with its memory, whatever comes later; a
// run already in an upstream batch is left to end as it would; the runs
// around a withdrawn one keep their order, and its connection's other runs
// in the partition never overtake the client's retry of it.
#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class WithdrawTest : public PipelineFixture {
 public:
  // A run of `count` records "<tag>-<i>" from `origin`; its ticket.
  RunTicket submit_from(std::uint64_t origin, const std::string& tag, int count = 2) {
    auto storage = std::make_shared<std::vector<std::string>>();
    for (int i = 0; i < count; ++i) storage->push_back(tag + "-" + std::to_string(i));
    RecordRun run = run_of(std::move(storage));
    run.origin = origin;
    const std::size_t slot = results.size();
    results.emplace_back();
    slot_of[tag] = slot;
    return producer->submit("t", 0, std::move(run), [this, slot](const RunResult& r) {
      ASSERT_FALSE(results[slot].has_value()) << "a run completed twice";
      results[slot] = r;
    });
  }
  const std::optional<RunResult>& result(const std::string& tag) { return results.at(slot_of.at(tag)); }

  // The values of every record of every batch sent so far, in order; acks them.
  std::vector<std::string> sent_values_acked() {
    std::vector<std::string> values;
    std::int64_t offset = 0;
    while (!upstream.outstanding.empty()) {
      auto request = upstream.take();
      for (const SentBatch& b : request.batches) {
        auto view = decode_record_batch(b.bytes);
        EXPECT_TRUE(view.has_value());
        if (!view) continue;
        for (const auto& r : view->records()) {
          values.emplace_back(reinterpret_cast<const char*>(r.value->data()), r.value->size());
        }
      }
      ScriptedUpstream::answer(request, [&offset](const SentBatch& b) {
        PartitionAnswer a = ok(offset);
        offset += b.record_count;
        return a;
      });
      poll();
    }
    return values;
  }

  // The leader is known but cannot be sent to: everything stays queued.
  void start_unreachable() {
    start();
    producer->on_metadata(leaders("t", {{1, 0}}));
    ack_first_batch("t", 0);
    results.clear();
    upstream.node_ready[1] = false;
  }

  std::map<std::string, std::size_t> slot_of;
};

TEST_F(WithdrawTest, AWithdrawnRunIsNeverSentAndItsMemoryIsReturnedAtOnce) {
  start_unreachable();
  submit_from(1, "a");
  const std::size_t before_b = producer->memory_budget().used();
  const RunTicket b = submit_from(2, "b", 50);
  submit_from(3, "c");
  poll();
  const std::size_t with_b = producer->memory_budget().used();
  ASSERT_GT(with_b, before_b);
  ASSERT_TRUE(upstream.outstanding.empty());

  EXPECT_EQ(producer->withdraw(b), WithdrawOutcome::kWithdrawn);
  ASSERT_TRUE(result("b").has_value()) << "its completion runs inside withdraw()";
  EXPECT_EQ(result("b")->error, ErrorCode::kNotEnoughReplicas);
  EXPECT_TRUE(result("b")->withdrawn);
  EXPECT_FALSE(result("b")->error_message.empty());
  EXPECT_LT(producer->memory_budget().used(), with_b - 50 * 3) << "its records' charge is released at once";
  EXPECT_EQ(producer->withdraw(b), WithdrawOutcome::kEnded);

  // Whatever comes later (the leader back, linger, a flush), b stays out.
  upstream.node_ready[1] = true;
  clock.advance(1000);
  producer->flush();
  poll();
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1"}));
  ASSERT_TRUE(result("a") && result("c"));
  EXPECT_EQ(result("a")->error, ErrorCode::kNone);
  EXPECT_EQ(result("c")->error, ErrorCode::kNone);
  EXPECT_EQ(result("c")->base_offset, result("a")->base_offset + 2) << "nothing of b between them";
  EXPECT_TRUE(producer->idle());
}

TEST_F(WithdrawTest, ARunWithRecordsInFlightIsLeftToEndAsItWould) {
  start_unreachable();
  upstream.node_ready[1] = true;
  const RunTicket a = submit_from(1, "a");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(producer->withdraw(a), WithdrawOutcome::kInFlight);
  EXPECT_FALSE(result("a").has_value());
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a-0", "a-1"}));
  ASSERT_TRUE(result("a").has_value());
  EXPECT_EQ(result("a")->error, ErrorCode::kNone);
  EXPECT_EQ(producer->withdraw(a), WithdrawOutcome::kEnded);
}

TEST_F(WithdrawTest, ItsConnectionsOtherQueuedRunsGoWithItAndOthersKeepTheirOrder) {
  start_unreachable();
  const RunTicket a1 = submit_from(7, "a1");
  submit_from(8, "x");
  submit_from(7, "a2");
  submit_from(8, "y");
  poll();
  EXPECT_EQ(producer->withdraw(a1), WithdrawOutcome::kWithdrawn);
  // The client's retry of a1 comes after the withdrawal: it must not be
  // overtaken by a2, which the same connection sent after a1.
  submit_from(7, "a1-retry");
  upstream.node_ready[1] = true;
  poll();
  ASSERT_TRUE(result("a2").has_value()) << "withdrawn before anything of it is sent";
  EXPECT_EQ(result("a2")->error, ErrorCode::kNotEnoughReplicas);
  EXPECT_TRUE(result("a2")->withdrawn);
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"x-0", "x-1", "y-0", "y-1", "a1-retry-0", "a1-retry-1"}));
  for (const char* tag : {"x", "y", "a1-retry"}) {
    ASSERT_TRUE(result(tag).has_value()) << tag;
    EXPECT_EQ(result(tag)->error, ErrorCode::kNone) << tag;
  }
}

TEST_F(WithdrawTest, ItsConnectionsRunsAheadOfItStayQueued) {
  start_unreachable();
  submit_from(7, "a1");
  submit_from(8, "x");
  const RunTicket a2 = submit_from(7, "a2");
  submit_from(7, "a3");
  poll();
  EXPECT_EQ(producer->withdraw(a2), WithdrawOutcome::kWithdrawn);
  submit_from(7, "a2-retry");
  upstream.node_ready[1] = true;
  poll();
  ASSERT_TRUE(result("a3").has_value());
  EXPECT_TRUE(result("a3")->withdrawn) << "behind the withdrawn run: barred";
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a1-0", "a1-1", "x-0", "x-1", "a2-retry-0", "a2-retry-1"}))
      << "a1, ahead of it, goes before the retry as it would have";
  ASSERT_TRUE(result("a1").has_value());
  EXPECT_EQ(result("a1")->error, ErrorCode::kNone);
}

TEST_F(WithdrawTest, ARunWithoutOriginTakesNoOtherRunWithIt) {
  start_unreachable();
  const RunTicket first = submit_from(0, "p");
  submit_from(0, "q");
  poll();
  EXPECT_EQ(producer->withdraw(first), WithdrawOutcome::kWithdrawn);
  upstream.node_ready[1] = true;
  poll();
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"q-0", "q-1"}));
  ASSERT_TRUE(result("q").has_value());
  EXPECT_EQ(result("q")->error, ErrorCode::kNone);
}

TEST_F(WithdrawTest, WithdrawingTheWholeQueueLeavesThePartitionIdleAndReusable) {
  start_unreachable();
  std::vector<RunTicket> tickets;
  for (int i = 0; i < 20; ++i)
    tickets.push_back(submit_from(static_cast<std::uint64_t>(i % 3 + 1), "r" + std::to_string(i)));
  poll();
  // From the back, so every withdrawal but the last leaves a live head.
  for (auto it = tickets.rbegin(); it != tickets.rend(); ++it) {
    const WithdrawOutcome o = producer->withdraw(*it);
    EXPECT_TRUE(o == WithdrawOutcome::kWithdrawn || o == WithdrawOutcome::kEnded);
  }
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, ErrorCode::kNotEnoughReplicas);
  }
  EXPECT_TRUE(state("t", 0).queued_runs().empty());
  EXPECT_TRUE(state("t", 0).queued_by_origin().empty());
  EXPECT_EQ(state("t", 0).queued_estimate_bytes(), 0u);
  upstream.node_ready[1] = true;
  submit_from(1, "later");
  poll();
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"later-0", "later-1"}));
}

TEST_F(WithdrawTest, AQueuedRunWithdrawnAfterTheDeliveryTimeoutFailedItIsEnded) {
  config.delivery_timeout_ms = 1000;
  start_unreachable();
  const RunTicket a = submit_from(1, "a");
  clock.advance(1001);
  poll();
  ASSERT_TRUE(result("a").has_value());
  EXPECT_EQ(result("a")->error, ErrorCode::kRequestTimedOut);
  EXPECT_FALSE(result("a")->withdrawn) << "expired, not withdrawn: the client was told it timed out";
  EXPECT_EQ(producer->withdraw(a), WithdrawOutcome::kEnded);
}

// Every record of a batch sent so far: values and base sequences, not acked.
std::vector<std::pair<std::int32_t, std::vector<std::string>>> batches_of(const SentProduce& request) {
  std::vector<std::pair<std::int32_t, std::vector<std::string>>> out;
  for (const SentBatch& b : request.batches) {
    auto view = decode_record_batch(b.bytes);
    EXPECT_TRUE(view.has_value());
    if (!view) continue;
    std::vector<std::string> values;
    for (const auto& r : view->records())
      values.emplace_back(reinterpret_cast<const char*>(r.value->data()), r.value->size());
    out.emplace_back(b.base_sequence, std::move(values));
  }
  return out;
}

// A batch refused NOT_ENOUGH_REPLICAS is not in the log: while it waits for
// its retry, a run in it is withdrawn as if never sent, and the batch goes
// again without it, from the same first sequence.
TEST_F(WithdrawTest, ARunInABatchRefusedUnappendedIsWithdrawnAndTheBatchRebuilt) {
  start_unreachable();
  upstream.node_ready[1] = true;
  submit_from(1, "a");
  const RunTicket b = submit_from(2, "b", 3);
  submit_from(3, "c");
  poll();
  auto first = upstream.take();
  ASSERT_EQ(batches_of(first).size(), 1u);
  const std::int32_t base = batches_of(first)[0].first;
  ScriptedUpstream::answer(first, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });
  ASSERT_TRUE(upstream.outstanding.empty());

  EXPECT_EQ(producer->withdraw(b), WithdrawOutcome::kWithdrawn);
  ASSERT_TRUE(result("b").has_value()) << "answered inside withdraw()";
  EXPECT_EQ(result("b")->error, ErrorCode::kNotEnoughReplicas);
  EXPECT_TRUE(result("b")->withdrawn);
  EXPECT_FALSE(result("a").has_value());

  clock.advance(100);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const auto again = batches_of(upstream.outstanding.front());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].first, base) << "the same first sequence: nothing of it is in the log";
  EXPECT_EQ(again[0].second, (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1"}));
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1"}));
  EXPECT_EQ(result("a")->error, ErrorCode::kNone);
  EXPECT_EQ(result("c")->error, ErrorCode::kNone);
  EXPECT_EQ(state("t", 0).next_sequence(), base + 4);
}

// An attempt that ended with an unknown outcome may be in the log: its runs
// stay, and are answered as in flight.
TEST_F(WithdrawTest, ARunInABatchWhoseOutcomeIsUnknownStaysInFlight) {
  start_unreachable();
  upstream.node_ready[1] = true;
  const RunTicket a = submit_from(1, "a");
  poll();
  auto first = upstream.take();
  ScriptedUpstream::fail(first, ErrorCode::kNetworkException);
  EXPECT_EQ(producer->withdraw(a), WithdrawOutcome::kInFlight);
  EXPECT_FALSE(result("a").has_value());
  clock.advance(100);
  poll();
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a-0", "a-1"}));
  EXPECT_EQ(result("a")->error, ErrorCode::kNone);
}

// A later batch still in flight behind a refused one cannot be in the log
// either: its run is withdrawn at once, and the partition sends nothing until
// that batch has come back and the batches are rebuilt without the run.
TEST_F(WithdrawTest, ARunInFlightBehindARefusedBatchIsWithdrawnAndItsSequencesReused) {
  start_unreachable();
  upstream.node_ready[1] = true;
  submit_from(1, "a");
  poll();
  const RunTicket b = submit_from(2, "b");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 2u);
  auto first = upstream.take();
  const std::int32_t base = batches_of(first)[0].first;
  ScriptedUpstream::answer(first, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });

  EXPECT_EQ(producer->withdraw(b), WithdrawOutcome::kWithdrawn);
  EXPECT_TRUE(result("b")->withdrawn);
  clock.advance(100);
  poll();
  EXPECT_EQ(upstream.outstanding.size(), 1u) << "nothing more goes while b's batch is out";
  auto second = upstream.take();
  ScriptedUpstream::answer(second, [](const SentBatch&) { return error(ErrorCode::kOutOfOrderSequenceNumber); });
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const auto retry = batches_of(upstream.outstanding.front());
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].first, base);
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"a-0", "a-1"}));
  submit_from(3, "c");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(batches_of(upstream.outstanding.front())[0].first, base + 2) << "b's sequences are reused";
  EXPECT_EQ(sent_values_acked(), (std::vector<std::string>{"c-0", "c-1"}));
  EXPECT_TRUE(producer->idle());
}

}  // namespace
}  // namespace pp::testing
