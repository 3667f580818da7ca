// Delivery timeouts and unresolved sequences (docs/design/PIPELINE.md C.9), and the
// producer identity's retries (C.2), under a manual clock.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class TimeoutTest : public PipelineFixture {};

TEST_F(TimeoutTest, ARunThatNeverLeftExpiresWithoutUsingASequence) {
  config.delivery_timeout_ms = 1000;
  start();
  submit("t", 0, 2);  // no metadata: it cannot be sent
  clock.advance(999);
  poll();
  EXPECT_FALSE(results[0].has_value());
  EXPECT_EQ(producer->next_wakeup_ms(), clock.now_ms() + 1) << "woken exactly at the deadline";
  clock.advance(1);
  poll();
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(results[0]->error, ErrorCode::kRequestTimedOut);
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 0) << "the expired run used no sequence";
  EXPECT_TRUE(producer->idle() == false);
}

TEST_F(TimeoutTest, AnExpiredRunTakesTheRunsQueuedBehindItWithIt) {
  config.delivery_timeout_ms = 1000;
  start();
  submit("t", 0, 1, "a");  // no metadata: nothing can be sent
  clock.advance(600);
  submit("t", 0, 1, "b");
  clock.advance(400);  // a's deadline; b has 600 ms left
  poll();
  ASSERT_TRUE(results[0].has_value());
  ASSERT_TRUE(results[1].has_value()) << "sent later, b would reach the log ahead of a's retry";
  EXPECT_EQ(results[0]->error, ErrorCode::kRequestTimedOut);
  EXPECT_EQ(results[1]->error, ErrorCode::kRequestTimedOut);
  EXPECT_NE(results[1]->error_message.find("queued behind"), std::string::npos) << results[1]->error_message;
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1, "c");  // arrives after the expiry: sent as usual
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 0);
}

TEST_F(TimeoutTest, AnExpiredInFlightBatchClosesTheConnectionAndLeavesTheSequenceUnresolved) {
  config.delivery_timeout_ms = 1000;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1, "a");
  poll();
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0); });
  submit("t", 0, 1, "b");  // seq 1: it will expire in flight
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  clock.advance(1000);
  submit("t", 0, 1, "c");  // queued behind it
  poll();
  EXPECT_EQ(upstream.resets, std::vector<std::int32_t>{1}) << "the expiring batch's connection is closed";
  ASSERT_TRUE(results[1].has_value());
  EXPECT_EQ(results[1]->error, ErrorCode::kRequestTimedOut);
  // Unresolved with nothing left unacked: seq 1 may or may not be in the log,
  // so the partition starts over under a new epoch instead of guessing (and
  // that happens in the same poll, before anything new is sent).
  EXPECT_EQ(producer->identity().epoch.value, 1);
  EXPECT_FALSE(state("t", 0).unresolved_next().has_value());
  // c, queued behind b, fails with it: sent now, it would be in the log
  // ahead of b's retry by its client (PIPELINE.md C.9).
  ASSERT_TRUE(results[2].has_value());
  EXPECT_EQ(results[2]->error, ErrorCode::kRequestTimedOut);
  EXPECT_NE(results[2]->error_message.find("queued behind"), std::string::npos) << results[2]->error_message;
  submit("t", 0, 1, "d");  // after the expiry: sent as usual, under the new epoch
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding.front().batches[0].producer_epoch, 1);
  EXPECT_EQ(upstream.outstanding.front().batches[0].base_sequence, 0);
}

TEST_F(TimeoutTest, UnresolvedIsResolvedWhenALaterBatchProvesTheExpiredOneWasWritten) {
  config.delivery_timeout_ms = 1000;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1, "a");
  poll();
  auto a = upstream.take();
  ScriptedUpstream::answer(a, [](const SentBatch&) { return ok(0); });
  submit("t", 0, 1, "b");  // seq 1
  poll();
  submit("t", 0, 1, "c");  // seq 2, in flight behind it
  poll();
  auto b = upstream.take();
  auto c = upstream.take();
  ScriptedUpstream::fail(b, ErrorCode::kRequestTimedOut);  // b awaits its retry...
  clock.advance(1000);                                     // ...and expires there
  poll();
  ASSERT_TRUE(results[1].has_value());
  EXPECT_EQ(results[1]->error, ErrorCode::kRequestTimedOut);
  // c succeeds: the broker accepted seq 2 after seq 1, so seq 1 was written.
  ScriptedUpstream::answer(c, [](const SentBatch&) { return ok(2); });
  poll();
  EXPECT_FALSE(state("t", 0).unresolved_next().has_value());
  EXPECT_EQ(producer->identity().epoch.value, 0) << "resolved without a bump";
}

TEST_F(TimeoutTest, InitProducerIdIsRetriedWithBackoff) {
  producer = std::make_unique<IdempotentProducer>(config, upstream, clock);
  producer->poll();
  ASSERT_EQ(upstream.init_requests.size(), 1u);
  auto done = std::move(upstream.init_requests.front());
  upstream.init_requests.clear();
  done(std::unexpected(ErrorCode::kNetworkException));
  EXPECT_EQ(producer->identity_state(), IdentityState::kUninitialized);
  producer->poll();
  EXPECT_TRUE(upstream.init_requests.empty()) << "backing off, not hammering";
  clock.advance(config.retry_backoff_max_ms);
  producer->poll();
  ASSERT_EQ(upstream.init_requests.size(), 1u);
  upstream.grant_producer_id(77, 0);
  EXPECT_EQ(producer->identity().id.value, 77);
}

}  // namespace
}  // namespace pp::testing
