// Produce over real sockets: responses in request order whatever order the
// sink completes in, acks=0, per-partition errors, legacy clients' formats.
#include <gtest/gtest.h>

#include <chrono>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using test::ProduceEntry;

class ProduceSessionTest : public test::FrontendFixture {
 protected:
  ProduceResponse read_produce(test::TestClient& client, std::int16_t version, std::int32_t expect_correlation) {
    auto frame = client.read_frame();
    EXPECT_TRUE(frame);
    if (!frame) return {};
    std::int32_t correlation = -1;
    auto response = test::decode_response<ProduceResponse>(*frame, version, &correlation);
    EXPECT_TRUE(response);
    EXPECT_EQ(correlation, expect_correlation);
    return response.value_or(ProduceResponse{});
  }
};

TEST_F(ProduceSessionTest, ResponsesLeaveInRequestOrderWhateverOrderTheUpstreamCompletes) {
  start();
  auto client = connect();
  // Three pipelined requests; the second has two partitions.
  const auto records = test::numbered_records(2);
  ASSERT_TRUE(client->write_raw(
      test::produce_frame(2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, records)}})));
  ASSERT_TRUE(
      client->write_raw(test::produce_frame(2, 2, -1,
                                            {{"orders", 1, test::legacy_set(1, CompressionCodec::kNone, records)},
                                             {"orders", 2, test::legacy_set(1, CompressionCodec::kGzip, records)}})));
  ASSERT_TRUE(client->write_raw(
      test::produce_frame(2, 3, 1, {{"events", 0, test::legacy_set(1, CompressionCodec::kNone, records)}})));
  ASSERT_TRUE(wait_for_submissions(4));
  EXPECT_EQ(sink_.submissions[1].partition, 1);
  EXPECT_EQ(sink_.submissions[2].partition, 2);

  // Complete backwards: nothing may be written before request 1 is answered.
  sink_.complete(3, 300);
  sink_.complete(2, 200);
  test::run_for(&loop_, 30);
  EXPECT_EQ(client->buffered(), 0u);
  EXPECT_FALSE(client->read_frame(50));
  sink_.complete(0, 100);
  // Request 1 is answered; request 2 still waits for partition 1; 3 waits on 2.
  auto first = read_produce(*client, 2, 1);
  ASSERT_EQ(first.responses.size(), 1u);
  EXPECT_EQ(first.responses[0].partition_responses[0].base_offset, 100);
  EXPECT_FALSE(client->read_frame(50));
  sink_.complete(1, 150);
  auto second = read_produce(*client, 2, 2);
  ASSERT_EQ(second.responses.size(), 1u);
  ASSERT_EQ(second.responses[0].partition_responses.size(), 2u);
  EXPECT_EQ(second.responses[0].partition_responses[0].index, 1);
  EXPECT_EQ(second.responses[0].partition_responses[0].base_offset, 150);
  EXPECT_EQ(second.responses[0].partition_responses[1].index, 2);
  EXPECT_EQ(second.responses[0].partition_responses[1].base_offset, 200);
  auto third = read_produce(*client, 2, 3);
  EXPECT_EQ(third.responses[0].name, "events");
  EXPECT_EQ(third.responses[0].partition_responses[0].base_offset, 300);
}

TEST_F(ProduceSessionTest, AcksZeroGetsNoResponseButItsRecordsAreSubmitted) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(test::produce_frame(
      0, 1, 0, {{"orders", 0, test::legacy_set(0, CompressionCodec::kSnappy, test::numbered_records(3))}})));
  ASSERT_TRUE(client->send(ApiKey::kApiVersions, 0, 2, ApiVersionsRequest{}));
  // The first frame back answers the ApiVersions request.
  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  std::int32_t correlation = 0;
  ASSERT_TRUE(test::decode_response<ApiVersionsResponse>(*frame, 0, &correlation));
  EXPECT_EQ(correlation, 2);
  ASSERT_TRUE(wait_for_submissions(1));
  EXPECT_EQ(sink_.submissions[0].run.records.size(), 3u);
  EXPECT_EQ(sink_.submissions[0].run.records[0].timestamp_ms, -1);  // magic 0
  sink_.complete(0, 5);
  EXPECT_FALSE(client->read_frame(50));
  EXPECT_EQ(frontend_->counters().records_received_total, 3u);
}

TEST_F(ProduceSessionTest, ACorruptPartitionGetsCorruptMessageAndTheOthersProceed) {
  start();
  auto client = connect();
  Bytes good = test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(2));
  Bytes bad = good;
  bad.back() ^= 0x5a;
  ASSERT_TRUE(client->write_raw(test::produce_frame(2, 9, 1, {{"orders", 0, bad}, {"orders", 1, good}})));
  ASSERT_TRUE(wait_for_submissions(1));
  test::run_for(&loop_, 20);
  ASSERT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(sink_.submissions[0].partition, 1);
  sink_.complete(0, 77);
  auto response = read_produce(*client, 2, 9);
  ASSERT_EQ(response.responses[0].partition_responses.size(), 2u);
  EXPECT_EQ(response.responses[0].partition_responses[0].error_code, ErrorCode::kCorruptMessage);
  EXPECT_EQ(response.responses[0].partition_responses[0].base_offset, -1);
  EXPECT_EQ(response.responses[0].partition_responses[1].error_code, ErrorCode::kNone);
  EXPECT_EQ(response.responses[0].partition_responses[1].base_offset, 77);
}

// Issue 14: refused at the front end, for that partition alone, before any
// upstream batch: a CreateTime over Kafka 4.x's default
// message.timestamp.after.max.ms (1 h) ahead, and a record no upstream
// request of the pipeline can carry (16 MiB), however small it is compressed.
TEST_F(ProduceSessionTest, TimestampsTooFarAheadAndRecordsTooLargeForUpstreamAreRefusedPerPartition) {
  start();
  auto client = connect();
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::vector<test::TestRecord> ahead = {{"k", "v", now}, {"k", "later", now + 2 * 3'600'000}};
  const std::vector<test::TestRecord> huge = {{"k", std::string(17 * 1048576, 'x'), now}};
  const std::vector<test::TestRecord> fine = {{"k", "v", now + 60'000}};
  ASSERT_TRUE(
      client->write_raw(test::produce_frame(9, 5, -1,
                                            {{"orders", 0, test::record_batch(CompressionCodec::kNone, ahead)},
                                             {"orders", 1, test::record_batch(CompressionCodec::kGzip, huge)},
                                             {"orders", 2, test::record_batch(CompressionCodec::kNone, fine)}})));
  ASSERT_TRUE(wait_for_submissions(1));
  test::run_for(&loop_, 20);
  ASSERT_EQ(sink_.submissions.size(), 1u) << "only the good partition goes upstream";
  EXPECT_EQ(sink_.submissions[0].partition, 2);
  sink_.complete(0, 55);
  auto response = read_produce(*client, 9, 5);
  ASSERT_EQ(response.responses[0].partition_responses.size(), 3u);
  const auto& parts = response.responses[0].partition_responses;
  EXPECT_EQ(parts[0].error_code, ErrorCode::kInvalidTimestamp);
  EXPECT_TRUE(parts[0].error_message.has_value());
  EXPECT_EQ(parts[1].error_code, ErrorCode::kMessageTooLarge);
  EXPECT_EQ(parts[2].error_code, ErrorCode::kNone);
  EXPECT_EQ(parts[2].base_offset, 55);
}

TEST_F(ProduceSessionTest, UpstreamErrorsAndOffsetsArePassedBackPerPartition) {
  start();
  auto client = connect();
  const Bytes batch = test::record_batch(CompressionCodec::kZstd, test::numbered_records(3));
  ASSERT_TRUE(client->write_raw(test::produce_frame(9, 4, -1, {{"orders", 0, batch}, {"nope", 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(2));
  sink_.complete(1, 0, ErrorCode::kUnknownTopicOrPartition);
  sink_.complete(0, 1234);
  auto response = read_produce(*client, 9, 4);
  ASSERT_EQ(response.responses.size(), 2u);
  EXPECT_EQ(response.responses[0].partition_responses[0].base_offset, 1234);
  EXPECT_EQ(response.responses[0].partition_responses[0].log_start_offset, 0);
  EXPECT_EQ(response.responses[1].partition_responses[0].error_code, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(response.responses[1].partition_responses[0].error_message, "fake failure");
  EXPECT_EQ(response.throttle_time_ms, 0);
}

TEST_F(ProduceSessionTest, ErrorsAboutTheProxysOwnProducerReachTheClientAsRequestTimedOut) {
  start();
  auto client = connect();
  const Bytes set = test::legacy_set(0, CompressionCodec::kNone, test::numbered_records(1));
  ASSERT_TRUE(
      client->write_raw(test::produce_frame(0, 1, 1, {{"orders", 0, set}, {"orders", 1, set}, {"orders", 2, set}})));
  ASSERT_TRUE(wait_for_submissions(3));
  sink_.complete(0, 0, ErrorCode::kInvalidProducerEpoch);
  sink_.complete(1, 0, ErrorCode::kUnsupportedVersion);
  sink_.complete(2, 0, ErrorCode::kNotEnoughReplicas);
  auto response = read_produce(*client, 0, 1);
  ASSERT_EQ(response.responses[0].partition_responses.size(), 3u);
  EXPECT_EQ(response.responses[0].partition_responses[0].error_code, ErrorCode::kRequestTimedOut);
  EXPECT_EQ(response.responses[0].partition_responses[1].error_code, ErrorCode::kUnknownServerError);
  EXPECT_EQ(response.responses[0].partition_responses[2].error_code, ErrorCode::kNotEnoughReplicas);
}

TEST_F(ProduceSessionTest, InvalidAcksIsAnsweredWithoutSubmitting) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(test::produce_frame(
      5, 6, 2, {{"orders", 0, test::record_batch(CompressionCodec::kNone, test::numbered_records(1))}})));
  auto response = read_produce(*client, 5, 6);
  ASSERT_EQ(response.responses.size(), 1u);
  EXPECT_EQ(response.responses[0].partition_responses[0].error_code, ErrorCode::kInvalidRequiredAcks);
  EXPECT_TRUE(sink_.submissions.empty());
}

struct LegacyWireCase {
  std::int16_t version;
  std::int8_t magic;
  CompressionCodec codec;
};

class LegacyOverSockets : public ProduceSessionTest, public ::testing::WithParamInterface<LegacyWireCase> {};

TEST_P(LegacyOverSockets, WrappedSetsArriveWholeAtTheSink) {
  const auto c = GetParam();
  start();
  auto client = connect();
  const auto records = test::numbered_records(20);
  ASSERT_TRUE(client->write_raw(
      test::produce_frame(c.version, 1, 1, {{"orders", 2, test::legacy_set(c.magic, c.codec, records)}})));
  ASSERT_TRUE(wait_for_submissions(1));
  const RecordRun& run = sink_.submissions[0].run;
  ASSERT_EQ(run.records.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(std::string(run.records[i].key->begin(), run.records[i].key->end()), records[i].key);
    EXPECT_EQ(std::string(run.records[i].value->begin(), run.records[i].value->end()), records[i].value);
  }
  sink_.complete(0, 40);
  auto response = read_produce(*client, c.version, 1);
  EXPECT_EQ(response.responses[0].partition_responses[0].base_offset, 40);
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, LegacyOverSockets,
    ::testing::Values(LegacyWireCase{0, 0, CompressionCodec::kGzip}, LegacyWireCase{0, 0, CompressionCodec::kSnappy},
                      LegacyWireCase{0, 0, CompressionCodec::kLz4}, LegacyWireCase{1, 0, CompressionCodec::kLz4},
                      LegacyWireCase{2, 1, CompressionCodec::kGzip}, LegacyWireCase{2, 1, CompressionCodec::kSnappy},
                      LegacyWireCase{2, 1, CompressionCodec::kLz4}));

}  // namespace
}  // namespace pp
