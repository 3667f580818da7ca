// Fetch and ListOffsets over sockets: stored batches served as appended
// (offsets and leader epoch filled in), an empty fetch parked up to
// max_wait_ms, fencing by leader epoch (KIP-320), and the log start that
// --retain-log-bytes advances.
#include <gtest/gtest.h>

#include "proxy/protocol/messages/fetch.h"
#include "proxy/protocol/messages/list_offsets.h"
#include "proxy/records/record_batch.h"
#include "tests/broker/test_cluster.h"
#include "tests/integration/broker/blocking_client.h"
#include "tests/integration/broker/broker_test_util.h"

namespace pp::test_broker {
namespace {

using namespace std::chrono_literals;
using testing::BlockingClient;
using testing::make_batch;
using testing::produce_request;

FetchRequest fetch_request(const std::string& topic, std::int32_t partition, std::int64_t offset,
                           std::int32_t max_wait_ms, std::int32_t leader_epoch = -1) {
  FetchRequest req;
  req.max_wait_ms = max_wait_ms;
  req.min_bytes = 1;
  req.max_bytes = 1 << 20;
  FetchTopic t;
  t.topic = topic;
  FetchPartition p;
  p.partition = partition;
  p.fetch_offset = offset;
  p.partition_max_bytes = 1 << 20;
  p.current_leader_epoch = leader_epoch;
  t.partitions.push_back(p);
  req.topics.push_back(t);
  return req;
}

class FetchOverSockets : public ::testing::Test {
 protected:
  FetchOverSockets() : cluster_(options()) {}
  static TestClusterOptions options() {
    TestClusterOptions o;
    o.brokers = 2;
    o.seed = 3;
    o.topics = {{"t", 1, 5}};  // leader: broker 1
    return o;
  }
  void SetUp() override {
    cluster_.start();
    BlockingClient c(cluster_.port(1));
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(c.send(produce_request("t", 0, make_batch({.sequence = 2 * i, .records = 2})), 9, i));
      ASSERT_TRUE(c.receive<ProduceResponse>(9));
    }
  }
  TestCluster cluster_;
};

TEST_F(FetchOverSockets, ServesTheStoredBatchesFromAnyOffset) {
  for (std::int16_t version : {4, 11, 12}) {
    BlockingClient c(cluster_.port(1));
    ASSERT_TRUE(c.send(fetch_request("t", 0, 3, 500), version, 1));  // offset 3 is inside batch 2
    auto resp = c.receive<FetchResponse>(version);
    ASSERT_TRUE(resp) << "v" << version;
    const auto& pd = resp->responses.at(0).partitions.at(0);
    EXPECT_EQ(pd.error_code, ErrorCode::kNone);
    EXPECT_EQ(pd.high_watermark, 6);
    ASSERT_TRUE(pd.records.data);
    auto split = split_record_batches(*pd.records.data);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->batches.size(), 2u);  // the batch holding offset 3, then the next
    auto header = decode_record_batch_header(split->batches[0]);
    ASSERT_TRUE(header);
    EXPECT_EQ(header->base_offset, 2);
    EXPECT_EQ(header->partition_leader_epoch, 0);
    EXPECT_EQ(header->base_sequence, 2);
    EXPECT_TRUE(decode_record_batch(split->batches[1]).has_value());  // CRC still valid
  }
}

TEST_F(FetchOverSockets, AnEmptyFetchIsParkedUpToMaxWait) {
  BlockingClient c(cluster_.port(1));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.send(fetch_request("t", 0, 6, 300), 11, 1));
  auto resp = c.receive<FetchResponse>(11);
  ASSERT_TRUE(resp);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 280ms);
  EXPECT_TRUE(resp->responses.at(0).partitions.at(0).records.data->empty());
  // Past the end: OFFSET_OUT_OF_RANGE at once.
  ASSERT_TRUE(c.send(fetch_request("t", 0, 7, 300), 11, 2));
  resp = c.receive<FetchResponse>(11);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->responses.at(0).partitions.at(0).error_code, ErrorCode::kOffsetOutOfRange);
}

TEST_F(FetchOverSockets, LeaderEpochsFenceAndNonLeadersRefuse) {
  ASSERT_TRUE(cluster_.move_leader("t", 0, 2));
  ASSERT_TRUE(cluster_.move_leader("t", 0, 1));  // leader epoch 2
  BlockingClient c(cluster_.port(1));
  ASSERT_TRUE(c.send(fetch_request("t", 0, 0, 0, 1), 11, 1));
  auto resp = c.receive<FetchResponse>(11);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->responses.at(0).partitions.at(0).error_code, ErrorCode::kFencedLeaderEpoch);
  ASSERT_TRUE(c.send(fetch_request("t", 0, 0, 0, 3), 11, 2));
  resp = c.receive<FetchResponse>(11);
  EXPECT_EQ(resp->responses.at(0).partitions.at(0).error_code, ErrorCode::kUnknownLeaderEpoch);
  BlockingClient follower(cluster_.port(2));
  ASSERT_TRUE(follower.send(fetch_request("t", 0, 0, 0), 12, 3));
  resp = follower.receive<FetchResponse>(12);
  ASSERT_TRUE(resp);
  const auto& pd = resp->responses.at(0).partitions.at(0);
  EXPECT_EQ(pd.error_code, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(pd.current_leader.leader_id, 1);  // v12 tag 1
  EXPECT_EQ(pd.current_leader.leader_epoch, 2);
}

TEST_F(FetchOverSockets, ListOffsetsEarliestLatestAndByTimestamp) {
  BlockingClient c(cluster_.port(1));
  for (std::int64_t ts : {kListOffsetsEarliest, kListOffsetsLatest, std::int64_t{1'700'000'000'001}}) {
    ListOffsetsRequest req;
    req.replica_id = -1;
    req.topics = {ListOffsetsTopic{"t", {ListOffsetsPartition{0, -1, ts, {}}}, {}}};
    ASSERT_TRUE(c.send(req, 7, 1));
    auto resp = c.receive<ListOffsetsResponse>(7);
    ASSERT_TRUE(resp);
    const auto& p = resp->topics.at(0).partitions.at(0);
    EXPECT_EQ(p.error_code, ErrorCode::kNone);
    EXPECT_EQ(p.leader_epoch, 0);
    // Batch i holds records with timestamps base+0 and base+1.
    const std::int64_t want = ts == kListOffsetsEarliest ? 0 : ts == kListOffsetsLatest ? 6 : 1;
    EXPECT_EQ(p.offset, want) << ts;
  }
}

// Four batches of two records with room for the payload of two: offsets 0-3
// are released, so the log starts at 4.
class FetchWithRetention : public ::testing::Test {
 protected:
  FetchWithRetention() : cluster_(options()) {}
  static TestClusterOptions options() {
    TestClusterOptions o;
    o.brokers = 1;
    o.seed = 5;
    o.topics = {{"t", 1, 5}};
    o.retain_log_bytes = 2 * make_batch({.sequence = 0, .records = 2}).size() + 1;
    return o;
  }
  void SetUp() override {
    cluster_.start();
    BlockingClient c(cluster_.port(1));
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(c.send(produce_request("t", 0, make_batch({.sequence = 2 * i, .records = 2})), 9, i));
      auto resp = c.receive<ProduceResponse>(9);
      ASSERT_TRUE(resp);
      ASSERT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNone);
    }
  }
  ListOffsetsPartitionResponse list_offsets(std::int64_t timestamp) {
    BlockingClient c(cluster_.port(1));
    ListOffsetsRequest req;
    req.replica_id = -1;
    req.topics = {ListOffsetsTopic{"t", {ListOffsetsPartition{0, -1, timestamp, {}}}, {}}};
    EXPECT_TRUE(c.send(req, 7, 1));
    auto resp = c.receive<ListOffsetsResponse>(7);
    EXPECT_TRUE(resp);
    return resp ? resp->topics.at(0).partitions.at(0) : ListOffsetsPartitionResponse{};
  }
  TestCluster cluster_;
};

TEST_F(FetchWithRetention, BelowTheLogStartIsOutOfRangeAndTheStartServes) {
  BlockingClient c(cluster_.port(1));
  ASSERT_TRUE(c.send(fetch_request("t", 0, 3, 0), 12, 1));
  auto resp = c.receive<FetchResponse>(12);
  ASSERT_TRUE(resp);
  const auto& below = resp->responses.at(0).partitions.at(0);
  EXPECT_EQ(below.error_code, ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(below.log_start_offset, 4);

  ASSERT_TRUE(c.send(fetch_request("t", 0, 4, 0), 12, 2));
  resp = c.receive<FetchResponse>(12);
  ASSERT_TRUE(resp);
  const auto& at_start = resp->responses.at(0).partitions.at(0);
  EXPECT_EQ(at_start.error_code, ErrorCode::kNone);
  EXPECT_EQ(at_start.log_start_offset, 4);
  EXPECT_EQ(at_start.high_watermark, 8);
  ASSERT_TRUE(at_start.records.data);
  auto split = split_record_batches(*at_start.records.data);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->batches.size(), 2u);
  auto header = decode_record_batch_header(split->batches[0]);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->base_offset, 4);
  // Every record is still counted: retention frees payloads, not history.
  EXPECT_EQ(cluster_.records("t", 0).size(), 8u);
}

TEST_F(FetchWithRetention, ListOffsetsEarliestIsTheLogStart) {
  EXPECT_EQ(list_offsets(kListOffsetsEarliest).offset, 4);
  EXPECT_EQ(list_offsets(kListOffsetsLatest).offset, 8);
  // The released records' timestamps (base+0, base+1) no longer answer.
  EXPECT_EQ(list_offsets(std::int64_t{1'700'000'000'000}).offset, 4);
}

}  // namespace
}  // namespace pp::test_broker
