// Idempotent clients over real sockets (issue 16): a retry of an acknowledged
// batch gets the original offsets without a second submission, a retry of a
// batch in flight (on another connection, as after a cut) is answered when
// the original completes, and a gap answers OUT_OF_ORDER_SEQUENCE_NUMBER.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

constexpr std::int64_t kPid = 77;

class IdempotentSessionTest : public test::FrontendFixture {
 protected:
  static Bytes batch(std::int32_t base_sequence, int records, std::int16_t epoch = 0) {
    RecordBatchBuildOptions o;
    o.producer_id = kPid;
    o.producer_epoch = epoch;
    o.base_sequence = base_sequence;
    return test::record_batch(CompressionCodec::kZstd, test::numbered_records(records), o);
  }
  static Bytes frame(std::int32_t correlation, std::int32_t base_sequence, int records) {
    return test::produce_frame(9, correlation, -1, {{"orders", 0, batch(base_sequence, records)}});
  }
  static ProducePartitionResponse read_one(test::TestClient& client, std::int32_t expect_correlation) {
    auto f = client.read_frame();
    EXPECT_TRUE(f);
    if (!f) return {};
    std::int32_t correlation = -1;
    auto response = test::decode_response<ProduceResponse>(*f, 9, &correlation);
    EXPECT_TRUE(response);
    EXPECT_EQ(correlation, expect_correlation);
    if (!response || response->responses.empty() || response->responses[0].partition_responses.empty()) return {};
    return response->responses[0].partition_responses[0];
  }
};

TEST_F(IdempotentSessionTest, RetryOfAnAcknowledgedBatchGetsItsOffsetsAgain) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(frame(1, 0, 3)));
  ASSERT_TRUE(wait_for_submissions(1));
  sink_.complete(0, 500);
  EXPECT_EQ(read_one(*client, 1).base_offset, 500);
  ASSERT_TRUE(client->write_raw(frame(2, 0, 3)));
  auto again = read_one(*client, 2);
  EXPECT_EQ(again.error_code, ErrorCode::kNone);
  EXPECT_EQ(again.base_offset, 500);
  EXPECT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(frontend_->counters().client_duplicates_acked_total, 1u);
}

TEST_F(IdempotentSessionTest, RetryOnANewConnectionWaitsForTheOriginalInFlight) {
  start();
  auto first = connect();
  ASSERT_TRUE(first->write_raw(frame(1, 0, 3)));
  ASSERT_TRUE(wait_for_submissions(1));
  first.reset();  // the connection is cut before the answer
  auto second = connect();
  ASSERT_TRUE(second->write_raw(frame(7, 0, 3)));
  ASSERT_TRUE(second->write_raw(frame(8, 3, 2)));  // the next batch goes on
  ASSERT_TRUE(wait_for_submissions(2));
  EXPECT_FALSE(second->read_frame(50));
  sink_.complete(0, 40);
  sink_.complete(1, 43);
  EXPECT_EQ(read_one(*second, 7).base_offset, 40);
  EXPECT_EQ(read_one(*second, 8).base_offset, 43);
  EXPECT_EQ(sink_.submissions.size(), 2u);
  EXPECT_EQ(frontend_->counters().client_duplicates_in_flight_total, 1u);
}

TEST_F(IdempotentSessionTest, AGapAnswersOutOfOrderSequenceAndSubmitsNothing) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(frame(1, 0, 3)));
  ASSERT_TRUE(wait_for_submissions(1));
  sink_.complete(0, 10);
  read_one(*client, 1);
  ASSERT_TRUE(client->write_raw(frame(2, 5, 1)));
  EXPECT_EQ(read_one(*client, 2).error_code, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(sink_.submissions.size(), 1u);
}

TEST_F(IdempotentSessionTest, AFailedBatchIsSentAgainOnRetry) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(frame(1, 0, 3)));
  ASSERT_TRUE(wait_for_submissions(1));
  sink_.complete(0, -1, ErrorCode::kRequestTimedOut);
  EXPECT_EQ(read_one(*client, 1).error_code, ErrorCode::kRequestTimedOut);
  ASSERT_TRUE(client->write_raw(frame(2, 0, 3)));
  ASSERT_TRUE(wait_for_submissions(2));
  sink_.complete(1, 90);
  EXPECT_EQ(read_one(*client, 2).base_offset, 90);
}

}  // namespace
}  // namespace pp
