// A Produce request is answered by its deadline (its timeout_ms less a
// margin, at most listener.max_request_hold_ms): partitions whose runs are
// still queued in the sink are withdrawn and answered NOT_ENOUGH_REPLICAS,
// partitions in flight upstream REQUEST_TIMED_OUT; a request answered in
// time leaves no deadline behind; an idempotent client's retry of a
// withdrawn batch is taken as new.
#include <gtest/gtest.h>

#include <chrono>

#include "frontend_test_support.h"
#include "produce_test_support.h"
#include "proxy/frontend/produce_deadlines.h"

namespace pp {
namespace {

using Clock = std::chrono::steady_clock;

Bytes produce_with_timeout(std::int16_t version, std::int32_t correlation, std::int32_t timeout_ms,
                           const std::vector<test::ProduceEntry>& entries) {
  RequestHeader h;
  h.api_key = ApiKey::kProduce;
  h.api_version = version;
  h.correlation_id = correlation;
  h.client_id = "deadline-test";
  ProduceRequest body = test::produce_body(-1, entries);
  body.timeout_ms = timeout_ms;
  return encode_request_frame(h, body);
}

class ProduceDeadlineTest : public test::FrontendFixture {
 protected:
  std::optional<ProduceResponse> read_produce(test::TestClient& client, std::int16_t version,
                                              std::int32_t expect_correlation, int timeout_ms = 3000) {
    auto frame = client.read_frame(timeout_ms);
    if (!frame) return std::nullopt;
    std::int32_t correlation = -1;
    auto response = test::decode_response<ProduceResponse>(*frame, version, &correlation);
    EXPECT_TRUE(response);
    EXPECT_EQ(correlation, expect_correlation);
    return response ? std::optional(*response) : std::nullopt;
  }
  static test::ProduceEntry legacy(std::int32_t partition, const std::string& prefix = "r") {
    return {"orders", partition, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(2, prefix))};
  }
};

TEST(ProduceHoldTest, TheClientsTimeoutLessAMarginCappedByTheListener) {
  EXPECT_EQ(produce_hold_ms(30000, 60000), 29000) << "a tenth, at most 1 s";
  EXPECT_EQ(produce_hold_ms(5000, 60000), 4500);
  EXPECT_EQ(produce_hold_ms(600, 60000), 500) << "at least 100 ms";
  EXPECT_EQ(produce_hold_ms(150, 60000), 75) << "never under half the timeout";
  EXPECT_EQ(produce_hold_ms(120000, 30000), 30000) << "listener.max_request_hold_ms caps it";
  EXPECT_EQ(produce_hold_ms(0, 30000), 30000) << "no usable timeout: the cap";
  EXPECT_EQ(produce_hold_ms(-1, 30000), 30000);
}

TEST_F(ProduceDeadlineTest, AQueuedPartitionIsWithdrawnAndAnsweredNotEnoughReplicasBeforeTheClientGivesUp) {
  start();
  auto client = connect();
  const auto sent = Clock::now();
  ASSERT_TRUE(client->write_raw(produce_with_timeout(2, 1, 600, {legacy(0)})));
  ASSERT_TRUE(wait_for_submissions(1));
  auto response = read_produce(*client, 2, 1, 3000);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent).count();
  ASSERT_TRUE(response);
  const auto& p = response->responses.at(0).partition_responses.at(0);
  EXPECT_EQ(p.error_code, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(p.base_offset, -1);
  EXPECT_LT(waited, 600) << "answered before the client's own timeout";
  EXPECT_GE(waited, 450) << "held until its deadline (600 ms less 100 ms), not answered at once";
  EXPECT_EQ(sink_.withdrawals, 1u);
  EXPECT_EQ(frontend_->counters().deadline_withdrawn_total, 1u);
  EXPECT_EQ(frontend_->counters().deadline_in_flight_total, 0u);
}

TEST_F(ProduceDeadlineTest, APartitionInFlightIsAnsweredRequestTimedOutAndItsLateResultIsDropped) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(produce_with_timeout(2, 1, 400, {legacy(0, "a"), legacy(1, "b")})));
  ASSERT_TRUE(wait_for_submissions(2));
  sink_.submissions[0].sent = true;  // partition 0's records went out upstream
  auto response = read_produce(*client, 2, 1);
  ASSERT_TRUE(response);
  const auto& entries = response->responses.at(0).partition_responses;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].error_code, ErrorCode::kRequestTimedOut);
  EXPECT_EQ(entries[1].error_code, ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(frontend_->counters().deadline_in_flight_total, 1u);
  EXPECT_EQ(frontend_->counters().deadline_withdrawn_total, 1u);

  // The upstream result arrives later: nobody is answered twice, and the
  // connection goes on answering in order.
  sink_.complete(0, 70);
  ASSERT_TRUE(client->write_raw(produce_with_timeout(2, 2, 30000, {legacy(2, "c")})));
  ASSERT_TRUE(wait_for_submissions(3));
  sink_.complete(2, 90);
  auto next = read_produce(*client, 2, 2);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->responses.at(0).partition_responses.at(0).base_offset, 90);
}

TEST_F(ProduceDeadlineTest, ARequestAnsweredInTimeLeavesNoDeadlineBehind) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(produce_with_timeout(2, 1, 300, {legacy(0)})));
  ASSERT_TRUE(wait_for_submissions(1));
  sink_.complete(0, 5);
  auto response = read_produce(*client, 2, 1);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses.at(0).partition_responses.at(0).base_offset, 5);
  test::run_for(&loop_, 400);
  EXPECT_EQ(sink_.withdrawals, 0u);
  EXPECT_EQ(frontend_->counters().deadline_withdrawn_total + frontend_->counters().deadline_in_flight_total, 0u);
  EXPECT_FALSE(client->read_frame(50));
}

TEST_F(ProduceDeadlineTest, TheListenerCapsWhatTheClientAsksFor) {
  FrontendConfig config;
  config.max_request_hold_ms = 300;
  start(config);
  auto client = connect();
  const auto sent = Clock::now();
  ASSERT_TRUE(client->write_raw(produce_with_timeout(2, 1, 600000, {legacy(0)})));
  auto response = read_produce(*client, 2, 1, 3000);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNotEnoughReplicas);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent).count(), 2000);
}

TEST_F(ProduceDeadlineTest, RequestsLeftUnreadWhileReadsWereStoppedCountFromTheStop) {
  // Two pending requests stop reads; the client sends four more at once,
  // which wait unhandled (in the proxy or the kernel) until the first two
  // are answered. They were
  // sent at the same moment as the first two, so the client gives up on
  // them at the same time: they must not each get a fresh 500 ms hold.
  FrontendConfig config;
  config.max_pending_requests_per_connection = 2;
  start(config);
  auto client = connect();
  const auto sent = Clock::now();
  for (std::int32_t c = 1; c <= 6; ++c) {
    ASSERT_TRUE(client->write_raw(produce_with_timeout(2, c, 600, {legacy(0, "r" + std::to_string(c))})));
  }
  for (std::int32_t c = 1; c <= 6; ++c) {
    auto response = read_produce(*client, 2, c, 3000);
    ASSERT_TRUE(response) << c;
    EXPECT_EQ(response->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNotEnoughReplicas) << c;
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent).count();
  EXPECT_LT(waited, 900) << "the last request was answered a whole hold after it was read, not after it was sent";
  EXPECT_EQ(sink_.withdrawals, 6u);
}

TEST_F(ProduceDeadlineTest, AnIdempotentClientsWithdrawnBatchIsTakenAsNewWhenRetried) {
  start();
  auto client = connect();
  RecordBatchBuildOptions o;
  o.producer_id = 91;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(3), o);
  ASSERT_TRUE(client->write_raw(produce_with_timeout(9, 1, 400, {{"orders", 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(1));
  auto first = read_produce(*client, 9, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNotEnoughReplicas);

  // The same batch again (same producer id, epoch, sequences): not appended
  // the first time, so it goes to the sink now and gets its own offsets.
  ASSERT_TRUE(client->write_raw(produce_with_timeout(9, 2, 30000, {{"orders", 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(2));
  sink_.complete(1, 300);
  auto retry = read_produce(*client, 9, 2);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNone);
  EXPECT_EQ(retry->responses.at(0).partition_responses.at(0).base_offset, 300);
  EXPECT_EQ(frontend_->counters().client_duplicates_acked_total, 0u);
}

TEST_F(ProduceDeadlineTest, ARetryWaitingForItsOriginalInFlightIsAnsweredByItsOwnDeadline) {
  start();
  auto first = connect();
  RecordBatchBuildOptions o;
  o.producer_id = 92;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(2), o);
  ASSERT_TRUE(first->write_raw(produce_with_timeout(9, 1, 30000, {{"orders", 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(1));
  sink_.submissions[0].sent = true;
  auto second = connect();
  ASSERT_TRUE(second->write_raw(produce_with_timeout(9, 7, 400, {{"orders", 0, batch}})));
  auto response = read_produce(*second, 9, 7);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kRequestTimedOut);
  EXPECT_EQ(sink_.submissions.size(), 1u) << "the retry waited for the original; nothing was sent twice";
  EXPECT_EQ(frontend_->counters().deadline_in_flight_total, 1u);
  sink_.complete(0, 12);
  auto original = read_produce(*first, 9, 1);
  ASSERT_TRUE(original);
  EXPECT_EQ(original->responses.at(0).partition_responses.at(0).base_offset, 12);
}

}  // namespace
}  // namespace pp
