// The standalone test-cluster binary, driven as a script would drive it
// (docs/design/INTERFACES.md, Test cluster): the README's KIP-1269 walk-through, a topic
// with RETAIN 20 on KIP-1269 brokers and one on a legacy broker, and the
// --retain-log-bytes bound.
#include <gtest/gtest.h>

#include <regex>

#include "proxy/protocol/messages/list_offsets.h"
#include "proxy/protocol/messages/metadata.h"
#include "tests/integration/broker/blocking_client.h"
#include "tests/integration/broker/broker_test_util.h"
#include "tests/integration/broker/child_process.h"

namespace pp::test_broker {
namespace {

using namespace std::chrono_literals;
using testing::BlockingClient;
using testing::ChildProcess;
using testing::make_batch;
using testing::produce_request;

const std::string kBinary = TEST_CLUSTER_BINARY;

std::vector<std::uint16_t> ports_of(const std::string& bootstrap_line) {
  std::vector<std::uint16_t> ports;
  const std::regex hostport("127\\.0\\.0\\.1:([0-9]+)");
  for (std::sregex_iterator it(bootstrap_line.begin(), bootstrap_line.end(), hostport), end; it != end; ++it) {
    ports.push_back(static_cast<std::uint16_t>(std::stoi((*it)[1])));
  }
  return ports;
}

// The JSON object of one partition in a `stats` line.
std::string partition_json(const std::string& stats, const std::string& topic, int partition) {
  const std::string key = "{\"topic\":\"" + topic + "\",\"partition\":" + std::to_string(partition) + ",";
  const auto at = stats.find(key);
  if (at == std::string::npos) return {};
  return stats.substr(at, stats.find('}', at) - at + 1);
}

class TestClusterBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(child_.started());
    auto first = child_.read_line();
    ASSERT_TRUE(first) << "no bootstrap line";
    ASSERT_EQ(first->rfind("bootstrap=", 0), 0u) << *first;
    ports_ = ports_of(*first);
    ASSERT_EQ(ports_.size(), 3u) << *first;
  }

  Uuid topic_id(const std::string& topic) {
    BlockingClient c(ports_[0]);
    MetadataRequest req;
    req.topics = std::vector<MetadataRequestTopic>{{{}, topic, {}}};
    if (!c.send(req, 12, 1)) return {};
    auto resp = c.receive<MetadataResponse>(12);
    return resp ? resp->topics.at(0).topic_id : Uuid{};
  }

  ChildProcess child_{{kBinary, "--brokers", "3", "--topic", "new20:4:20", "--topic", "legacy:2", "--legacy-brokers",
                       "1", "--seed", "11"}};
  std::vector<std::uint16_t> ports_;
};

TEST_F(TestClusterBinary, Kip1269WalkThrough) {
  // Leaders round-robin: new20-0..3 on 1,2,3,1; legacy-0,1 on 2,3. Broker 3
  // is legacy, so new20-2 has a window of 5 there.
  auto stats = child_.command("stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->rfind("{\"partitions\":[", 0), 0u) << *stats;
  EXPECT_EQ(partition_json(*stats, "new20", 0),
            "{\"topic\":\"new20\",\"partition\":0,\"leader\":1,\"leader_epoch\":0,\"retain\":20,"
            "\"records\":0,\"duplicates\":0,\"max_inflight\":0,\"window_violations\":0}");
  EXPECT_NE(partition_json(*stats, "new20", 2).find("\"leader\":3,\"leader_epoch\":0,\"retain\":5"), std::string::npos);
  EXPECT_NE(partition_json(*stats, "legacy", 1).find("\"retain\":5"), std::string::npos);

  // A KIP-1269 broker announces RETAIN 20 in Produce v14...
  const Uuid id = topic_id("new20");
  ASSERT_FALSE(id.is_zero());
  BlockingClient b1(ports_[0]);
  const Bytes batch = make_batch({.sequence = 0, .records = 3});
  ASSERT_TRUE(b1.send(produce_request("new20", 0, batch, -1, id), 14, 1));
  auto resp = b1.receive<ProduceResponse>(14);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).producer_state_batches_to_retain, 20);
  // ...the retry of that batch is a duplicate...
  ASSERT_TRUE(b1.send(produce_request("new20", 0, batch, -1, id), 14, 2));
  resp = b1.receive<ProduceResponse>(14);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).base_offset, 0);
  // ...and the legacy broker speaks v13 only.
  BlockingClient b3(ports_[2]);
  ASSERT_TRUE(b3.send(produce_request("new20", 2, make_batch({.sequence = 0}), -1, id), 13, 1));
  auto legacy = b3.receive<ProduceResponse>(13);
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNone);

  stats = child_.command("stats");
  ASSERT_TRUE(stats);
  EXPECT_NE(partition_json(*stats, "new20", 0).find("\"records\":3,\"duplicates\":1"), std::string::npos) << *stats;
  EXPECT_NE(partition_json(*stats, "new20", 2).find("\"records\":1,"), std::string::npos);

  // Leadership moves to the legacy broker: window 5, epoch bumped.
  EXPECT_EQ(child_.command("leader new20 0 3"), "ok");
  stats = child_.command("stats");
  EXPECT_NE(partition_json(*stats, "new20", 0).find("\"leader\":3,\"leader_epoch\":1,\"retain\":5"), std::string::npos)
      << *stats;
  EXPECT_EQ(child_.command("flip-leaders"), "ok");
  stats = child_.command("stats");
  EXPECT_NE(partition_json(*stats, "new20", 0).find("\"leader\":1,\"leader_epoch\":2,\"retain\":20"), std::string::npos)
      << *stats;

  // Every other control command answers ok, or error with a reason.
  EXPECT_EQ(child_.command("rtt 20"), "ok");
  EXPECT_EQ(child_.command("rtt 0"), "ok");
  EXPECT_EQ(child_.command("drop-responses 0.05"), "ok");
  EXPECT_EQ(child_.command("drop-responses 0"), "ok");
  EXPECT_EQ(child_.command("error new20 1 NOT_LEADER_OR_FOLLOWER 2"), "ok");
  EXPECT_EQ(child_.command("down 2"), "ok");
  EXPECT_FALSE(BlockingClient(ports_[1]).connected());
  EXPECT_EQ(child_.command("up 2"), "ok");
  EXPECT_TRUE(BlockingClient(ports_[1]).connected());
  EXPECT_EQ(child_.command("leader new20 9 1"), "error: unknown partition new20-9");
  EXPECT_EQ(child_.command("error new20 1 NOPE 1"), "error: unknown Kafka error name 'NOPE'");
  EXPECT_EQ(child_.command("fly"), "error: unknown command 'fly'");

  child_.close_stdin();  // stdin closing ends it, cleanly
  EXPECT_EQ(child_.wait_exit(5s), 0);
}

TEST_F(TestClusterBinary, SigtermStopsIt) {
  EXPECT_EQ(child_.command("stats").value_or("").rfind("{", 0), 0u);
  kill(child_.pid(), SIGTERM);
  EXPECT_EQ(child_.wait_exit(5s), 0);
}

TEST(TestClusterBinaryRetention, RetainLogBytesAdvancesTheLogStart) {
  // Room for the payload of two batches of two records: four batches start the log at 4.
  const std::size_t bound = 2 * make_batch({.sequence = 0, .records = 2}).size() + 1;
  ChildProcess child({kBinary, "--brokers", "1", "--topic", "t:1", "--retain-log-bytes", std::to_string(bound)});
  ASSERT_TRUE(child.started());
  auto first = child.read_line();
  ASSERT_TRUE(first) << "no bootstrap line";
  const auto ports = ports_of(*first);
  ASSERT_EQ(ports.size(), 1u) << *first;
  BlockingClient c(ports[0]);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(c.send(produce_request("t", 0, make_batch({.sequence = 2 * i, .records = 2})), 9, i));
    auto resp = c.receive<ProduceResponse>(9);
    ASSERT_TRUE(resp);
    ASSERT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNone);
  }
  ListOffsetsRequest req;
  req.replica_id = -1;
  req.topics = {ListOffsetsTopic{"t", {ListOffsetsPartition{0, -1, kListOffsetsEarliest, {}}}, {}}};
  ASSERT_TRUE(c.send(req, 7, 9));
  auto earliest = c.receive<ListOffsetsResponse>(7);
  ASSERT_TRUE(earliest);
  EXPECT_EQ(earliest->topics.at(0).partitions.at(0).offset, 4);
  EXPECT_NE(child.command("stats").value_or("").find("\"records\":8,"), std::string::npos);  // all still counted
  child.close_stdin();
  EXPECT_EQ(child.wait_exit(5s), 0);
}

TEST(TestClusterBinaryUsage, BadArgumentsExitWithTwo) {
  ChildProcess low_retain({kBinary, "--brokers", "1", "--topic", "t:1:3"});
  EXPECT_EQ(low_retain.wait_exit(5s), 2);
  ChildProcess no_brokers({kBinary, "--topic", "t:1"});
  EXPECT_EQ(no_brokers.wait_exit(5s), 2);
  ChildProcess too_many_legacy({kBinary, "--brokers", "1", "--legacy-brokers", "2"});
  EXPECT_EQ(too_many_legacy.wait_exit(5s), 2);
  ChildProcess negative_retention({kBinary, "--brokers", "1", "--retain-log-bytes", "-1"});
  EXPECT_EQ(negative_retention.wait_exit(5s), 2);
}

}  // namespace
}  // namespace pp::test_broker
