// The test cluster over real sockets: version negotiation, Metadata, the
// KIP-1269 tag on the wire, legacy brokers, bad input, and every fault
// injection as a client sees it.
#include <gtest/gtest.h>

#include <thread>

#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/records/record_batch.h"
#include "tests/broker/test_cluster.h"
#include "tests/integration/broker/blocking_client.h"
#include "tests/integration/broker/broker_test_util.h"

namespace pp::test_broker {
namespace {

using namespace std::chrono_literals;
using testing::BatchSpec;
using testing::BlockingClient;
using testing::make_batch;
using testing::produce_request;

class ClusterOverSockets : public ::testing::Test {
 protected:
  ClusterOverSockets() : cluster_(options()) {}
  static TestClusterOptions options() {
    TestClusterOptions o;
    o.brokers = 3;
    o.legacy_brokers = 1;
    o.seed = 42;
    o.topics = {{"new20", 1, 20}, {"t5", 1, 5}};  // leaders: new20-0 on 1, t5-0 on 2
    return o;
  }
  void SetUp() override { cluster_.start(); }

  // Produces one batch and returns the partition response.
  std::optional<ProducePartitionResponse> produce_via(BlockingClient& c, const std::string& topic,
                                                      std::int32_t partition, const BatchSpec& spec,
                                                      std::int16_t version = 14, std::int32_t corr = 1,
                                                      std::chrono::milliseconds timeout = 5s) {
    const Bytes batch = make_batch(spec);
    const auto info = cluster_.partition_info(topic, partition);
    if (!c.send(produce_request(topic, partition, batch, -1, info->topic_id), version, corr)) {
      return std::nullopt;
    }
    auto resp = c.receive<ProduceResponse>(version, nullptr, timeout);
    if (!resp) return std::nullopt;
    return resp->responses.at(0).partition_responses.at(0);
  }

  TestCluster cluster_;
};

TEST_F(ClusterOverSockets, ApiVersionsListsRangesAndLegacyStopsProduceAtV13) {
  for (BrokerId b : {1, 3}) {
    BlockingClient c(cluster_.port(b));
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(ApiVersionsRequest{}, 3, 7));
    std::int32_t corr = 0;
    auto resp = c.receive<ApiVersionsResponse>(3, &corr);
    ASSERT_TRUE(resp);
    EXPECT_EQ(corr, 7);
    EXPECT_EQ(resp->error_code, ErrorCode::kNone);
    auto produce =
        std::find_if(resp->api_keys.begin(), resp->api_keys.end(), [](const auto& k) { return k.api_key == 0; });
    ASSERT_NE(produce, resp->api_keys.end());
    EXPECT_EQ(produce->min_version, 3);
    EXPECT_EQ(produce->max_version, b == 3 ? 13 : 14) << "broker " << b;
  }
}

TEST_F(ClusterOverSockets, TooNewApiVersionsIsAnsweredInTheV0Layout) {
  BlockingClient c(cluster_.port(1));
  ASSERT_TRUE(c.send(ApiVersionsRequest{}, 4, 9));  // we advertise up to v3
  auto resp = c.receive<ApiVersionsResponse>(0);    // KIP-511: v0 layout, our ranges
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->error_code, ErrorCode::kUnsupportedVersion);
  EXPECT_GE(resp->api_keys.size(), 6u);
}

TEST_F(ClusterOverSockets, MetadataCarriesTopicIdsLeaderEpochsAndNoAutoCreate) {
  ASSERT_TRUE(cluster_.move_leader("t5", 0, 2));
  BlockingClient c(cluster_.port(1));
  MetadataRequest req;
  req.topics = std::vector<MetadataRequestTopic>{{{}, std::string("t5"), {}}, {{}, std::string("nope"), {}}};
  ASSERT_TRUE(c.send(req, 12, 1));
  auto resp = c.receive<MetadataResponse>(12);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->brokers.size(), 3u);
  ASSERT_EQ(resp->topics.size(), 2u);
  EXPECT_EQ(resp->topics[0].error_code, ErrorCode::kNone);
  EXPECT_EQ(resp->topics[0].topic_id, cluster_.partition_info("t5", 0)->topic_id);
  EXPECT_FALSE(resp->topics[0].topic_id.is_zero());
  EXPECT_EQ(resp->topics[0].partitions.at(0).leader_id, 2);
  EXPECT_EQ(resp->topics[0].partitions.at(0).leader_epoch, 1);
  EXPECT_EQ(resp->topics[1].error_code, ErrorCode::kUnknownTopicOrPartition);

  // v12 lookup by topic id alone.
  MetadataRequest by_id;
  by_id.topics = std::vector<MetadataRequestTopic>{{resp->topics[0].topic_id, std::nullopt, {}}};
  ASSERT_TRUE(c.send(by_id, 12, 2));
  auto resp2 = c.receive<MetadataResponse>(12);
  ASSERT_TRUE(resp2);
  EXPECT_EQ(resp2->topics.at(0).name, "t5");

  // Metadata v0: an empty list means every topic.
  ASSERT_TRUE(c.send(MetadataRequest{}, 0, 3));
  auto all = c.receive<MetadataResponse>(0);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->topics.size(), 2u);
}

TEST_F(ClusterOverSockets, ProduceV14CarriesTheTopicWindowOnTheWire) {
  const BrokerId leader = cluster_.partition_info("new20", 0)->leader;
  ASSERT_EQ(leader, 1);
  BlockingClient c(cluster_.port(leader));
  const Bytes batch = make_batch({.sequence = 0, .records = 3});
  ASSERT_TRUE(c.send(produce_request("new20", 0, batch, -1, cluster_.partition_info("new20", 0)->topic_id), 14, 5));
  auto frame = c.receive_frame(5s);
  ASSERT_TRUE(frame);
  // PartitionProduceResponse tag 1 = 20, bytes 01 04 00 00 00 14 (docs/design/PIPELINE.md B).
  const Bytes tag{0x01, 0x04, 0x00, 0x00, 0x00, 0x14};
  EXPECT_NE(std::search(frame->begin(), frame->end(), tag.begin(), tag.end()), frame->end());
  WireReader r(*frame);
  ASSERT_EQ(*r.read_int32(), 5);
  ASSERT_EQ(*r.read_uvarint(), 0u);
  auto resp = decode_body<ProduceResponse>(r, 14);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).producer_state_batches_to_retain, 20);
  EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).base_offset, 0);

  // A RETAIN 5 topic announces nothing (the default is not serialised).
  ASSERT_TRUE(cluster_.move_leader("t5", 0, 1));
  auto t5 = produce_via(c, "t5", 0, {.sequence = 0}, 14, 6);
  ASSERT_TRUE(t5);
  EXPECT_EQ(t5->producer_state_batches_to_retain, 5);
}

TEST_F(ClusterOverSockets, LegacyBrokerServesV13AndClosesOnV14) {
  ASSERT_TRUE(cluster_.move_leader("new20", 0, 3));
  BlockingClient c(cluster_.port(3));
  auto r = produce_via(c, "new20", 0, {.sequence = 0}, 13);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error_code, ErrorCode::kNone);
  EXPECT_EQ(cluster_.partition_info("new20", 0)->retain, 5);
  EXPECT_FALSE(produce_via(c, "new20", 0, {.sequence = 1}, 14));
  EXPECT_TRUE(c.wait_closed(2s));
}

TEST_F(ClusterOverSockets, MalformedRequestClosesOnlyThatConnection) {
  BlockingClient good(cluster_.port(1));
  BlockingClient bad(cluster_.port(1));
  ASSERT_TRUE(good.send(ApiVersionsRequest{}, 3, 1));
  ASSERT_TRUE(good.receive<ApiVersionsResponse>(3));
  // A Metadata v1 frame whose topic count claims more than the frame holds.
  const Bytes frame{0, 0, 0, 14, 0, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff};
  ASSERT_TRUE(bad.send_raw(frame));
  EXPECT_TRUE(bad.wait_closed(2s));
  // A negative frame size too.
  BlockingClient worse(cluster_.port(1));
  ASSERT_TRUE(worse.send_raw(Bytes{0xff, 0xff, 0xff, 0xff}));
  EXPECT_TRUE(worse.wait_closed(2s));
  // An API we don't serve.
  BlockingClient unknown(cluster_.port(1));
  ASSERT_TRUE(unknown.send_raw(Bytes{0, 0, 0, 10, 0, 50, 0, 0, 0, 0, 0, 1, 0xff, 0xff}));
  EXPECT_TRUE(unknown.wait_closed(2s));
  // The good connection carries on.
  ASSERT_TRUE(good.send(ApiVersionsRequest{}, 3, 2));
  EXPECT_TRUE(good.receive<ApiVersionsResponse>(3));
}

TEST_F(ClusterOverSockets, RttHoldsPipelinedBatchesAndTheWatchdogSeesTheOverrun) {
  cluster_.set_rtt_ms(300);
  BlockingClient c(cluster_.port(2));  // t5-0's leader
  ASSERT_EQ(cluster_.partition_info("t5", 0)->leader, 2);
  const auto start = std::chrono::steady_clock::now();
  std::vector<Bytes> batches;
  for (int i = 0; i < 7; ++i) batches.push_back(make_batch({.sequence = i}));
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(c.send(produce_request("t5", 0, batches[i]), 9, 100 + i));
  for (int i = 0; i < 7; ++i) {
    std::int32_t corr = 0;
    auto resp = c.receive<ProduceResponse>(9, &corr);
    ASSERT_TRUE(resp) << i;
    EXPECT_EQ(corr, 100 + i);  // in request order
    EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).base_offset, i);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 290ms);
  const auto stats = cluster_.stats();
  const auto* p = stats.find("t5", 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->max_inflight, 7);
  EXPECT_EQ(p->window_violations, 2);
  EXPECT_EQ(p->records, 7);
}

TEST_F(ClusterOverSockets, SilentDropAppendsAndTheRetryIsADuplicate) {
  ASSERT_TRUE(cluster_.drop_responses(1.0));
  BlockingClient c(cluster_.port(2));
  EXPECT_FALSE(produce_via(c, "t5", 0, {.sequence = 0, .records = 4}, 9, 1, 300ms));  // no answer
  EXPECT_FALSE(c.closed());
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 4);
  // The connection's return path is dead now, faults off or not: a later
  // request is appended but never answered, as Kafka never answers past a
  // lost response.
  ASSERT_TRUE(cluster_.drop_responses(0.0));
  EXPECT_FALSE(produce_via(c, "t5", 0, {.sequence = 4, .records = 1}, 9, 2, 300ms));
  EXPECT_FALSE(c.closed());
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 5);
  // The client gives up on it and retries both on a new connection.
  BlockingClient fresh(cluster_.port(2));
  auto retry = produce_via(fresh, "t5", 0, {.sequence = 0, .records = 4}, 9, 3);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->error_code, ErrorCode::kNone);
  EXPECT_EQ(retry->base_offset, 0);
  auto second = produce_via(fresh, "t5", 0, {.sequence = 4, .records = 1}, 9, 4);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->error_code, ErrorCode::kNone);
  EXPECT_EQ(second->base_offset, 4);
  EXPECT_EQ(cluster_.stats().find("t5", 0)->duplicates, 2);
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 5);
}

TEST_F(ClusterOverSockets, DropWithCloseAndMidRequestDisconnects) {
  ASSERT_TRUE(cluster_.drop_responses(1.0, DropMode::kCloseConnection));
  {
    BlockingClient c(cluster_.port(2));
    EXPECT_FALSE(produce_via(c, "t5", 0, {.sequence = 0}, 9));
    EXPECT_TRUE(c.wait_closed(2s));
  }
  ASSERT_TRUE(cluster_.drop_responses(0.0));
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 1);

  ASSERT_TRUE(cluster_.disconnect_next_produce(2, 1, /*after_append=*/false));
  {
    BlockingClient c(cluster_.port(2));
    EXPECT_FALSE(produce_via(c, "t5", 0, {.sequence = 1}, 9));
    EXPECT_TRUE(c.wait_closed(2s));
  }
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 1);
  ASSERT_TRUE(cluster_.disconnect_next_produce(2, 1, /*after_append=*/true));
  {
    BlockingClient c(cluster_.port(2));
    EXPECT_FALSE(produce_via(c, "t5", 0, {.sequence = 1}, 9));
    EXPECT_TRUE(c.wait_closed(2s));
  }
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 2);
  BlockingClient c(cluster_.port(2));
  auto retry = produce_via(c, "t5", 0, {.sequence = 1}, 9);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->base_offset, 1);  // recognised
  const ClusterStats stats = cluster_.stats();
  const auto* p = stats.find("t5", 0);
  EXPECT_EQ(p->duplicates, 1);
  EXPECT_EQ(p->max_inflight, 1);  // nothing stayed held after the cuts
}

TEST_F(ClusterOverSockets, InjectedErrorThenNotLeaderWithKip951Hint) {
  ASSERT_TRUE(cluster_.inject_error("t5", 0, ErrorCode::kKafkaStorageError, 2));
  BlockingClient c(cluster_.port(2));
  for (int i = 0; i < 2; ++i) {
    auto r = produce_via(c, "t5", 0, {.sequence = 0}, 10, i);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error_code, ErrorCode::kKafkaStorageError);
  }
  ASSERT_TRUE(cluster_.move_leader("t5", 0, 1));
  ProduceResponse resp;
  const Bytes batch = make_batch({.sequence = 0});
  ASSERT_TRUE(c.send(produce_request("t5", 0, batch), 10, 9));
  auto r = c.receive<ProduceResponse>(10);
  ASSERT_TRUE(r);
  const auto& pr = r->responses.at(0).partition_responses.at(0);
  EXPECT_EQ(pr.error_code, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(pr.current_leader.leader_id, 1);
  ASSERT_EQ(r->node_endpoints.size(), 1u);
  EXPECT_EQ(r->node_endpoints[0].port, cluster_.port(1));
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 0);
}

TEST_F(ClusterOverSockets, AcksZeroIsNeverAnsweredAndAFailureClosesTheConnection) {
  BlockingClient c(cluster_.port(2));
  const Bytes first = make_batch({.sequence = 0});
  ASSERT_TRUE(c.send(produce_request("t5", 0, first, 0), 9, 1));
  EXPECT_FALSE(c.receive_frame(300ms));
  EXPECT_FALSE(c.closed());
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 1);
  // To a broker that isn't the leader: the close is the only signal.
  BlockingClient wrong(cluster_.port(1));
  ASSERT_TRUE(wrong.send(produce_request("t5", 0, make_batch({.sequence = 1}), 0), 9, 1));
  EXPECT_TRUE(wrong.wait_closed(2s));
  EXPECT_EQ(cluster_.stats().find("t5", 0)->records, 1);
}

TEST_F(ClusterOverSockets, BrokerDownMovesLeadersAndUpListensOnTheSamePort) {
  const std::uint16_t port = cluster_.port(2);
  {
    BlockingClient c(port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(cluster_.broker_down(2));
    EXPECT_TRUE(c.wait_closed(2s));
  }
  EXPECT_FALSE(BlockingClient(port).connected());
  const auto moved = cluster_.partition_info("t5", 0);
  EXPECT_EQ(moved->leader, 3);
  EXPECT_EQ(moved->leader_epoch, 1);
  BlockingClient meta(cluster_.port(1));
  ASSERT_TRUE(meta.send(MetadataRequest{}, 0, 1));
  auto resp = meta.receive<MetadataResponse>(0);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->brokers.size(), 2u);

  ASSERT_TRUE(cluster_.broker_up(2));
  EXPECT_EQ(cluster_.port(2), port);
  BlockingClient again(port);
  ASSERT_TRUE(again.connected());
  ASSERT_TRUE(again.send(ApiVersionsRequest{}, 3, 1));
  EXPECT_TRUE(again.receive<ApiVersionsResponse>(3));
}

TEST_F(ClusterOverSockets, ControlCommandsReplyOkOrError) {
  EXPECT_EQ(cluster_.execute("leader t5 0 1"), "ok");
  EXPECT_EQ(cluster_.execute("leader t5 0 9"), "error: no broker 9");
  EXPECT_EQ(cluster_.execute("leader nope 0 1"), "error: unknown partition nope-0");
  EXPECT_EQ(cluster_.execute("flip-leaders"), "ok");
  EXPECT_EQ(cluster_.execute("rtt 5"), "ok");
  EXPECT_EQ(cluster_.execute("drop-responses 0.05"), "ok");
  EXPECT_EQ(cluster_.execute("drop-responses 2"), "error: RATE must be between 0 and 1");
  EXPECT_EQ(cluster_.execute("drop-responses 0 close"), "ok");
  EXPECT_EQ(cluster_.execute("error t5 0 NOT_LEADER_OR_FOLLOWER 3"), "ok");
  EXPECT_EQ(cluster_.execute("error t5 0 NO_SUCH_ERROR 3"), "error: unknown Kafka error name 'NO_SUCH_ERROR'");
  EXPECT_EQ(cluster_.execute("reject-key t5 0 poison INVALID_RECORD"), "ok");
  EXPECT_EQ(cluster_.execute("reject-key t5 0 poison NONE"), "ok");
  EXPECT_EQ(cluster_.execute("reject-key nope 0 poison INVALID_RECORD"), "error: unknown partition nope-0");
  EXPECT_EQ(cluster_.execute("reject-key t5 0 poison NO_SUCH_ERROR"),
            "error: unknown Kafka error name 'NO_SUCH_ERROR'");
  EXPECT_EQ(cluster_.execute("reject-key t5 0"), "error: usage: reject-key TOPIC PARTITION KEY ERROR_NAME");
  EXPECT_EQ(cluster_.execute("down 3"), "ok");
  EXPECT_EQ(cluster_.execute("up 3"), "ok");
  EXPECT_EQ(cluster_.execute("bogus"), "error: unknown command 'bogus'");
  EXPECT_EQ(cluster_.execute("rtt"), "error: usage: rtt MS");
  const std::string stats = cluster_.execute("stats");
  EXPECT_EQ(stats.rfind("{\"partitions\":[{\"topic\":\"new20\",\"partition\":0,", 0), 0u) << stats;
  EXPECT_NE(stats.find("\"retain\":20"), std::string::npos);
  EXPECT_NE(stats.find("\"window_violations\":0"), std::string::npos);
}

}  // namespace
}  // namespace pp::test_broker
