// Upstream against the project's KIP-1269 test cluster (tests/broker): the
// broker side of the newest versions. Produce v14 and Metadata v12 are
// negotiated, metadata carries leader epochs and topic ids, a v14 Produce
// sent without a topic id gets it from the cache and its answer gets the
// name back, with the window the leader announces.
#include "tests/broker/test_cluster.h"

#include <gtest/gtest.h>

#include <map>

#include "proxy/records/record_batch_builder.h"
#include "proxy/upstream/upstream.h"
#include "tests/integration/upstream/loop_fixture.h"

namespace pp::upstream::test {
namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

class UpstreamOnTestCluster : public LoopTest {
 protected:
  UpstreamOnTestCluster() : cluster_(options()) {}
  static test_broker::TestClusterOptions options() {
    test_broker::TestClusterOptions o;
    o.brokers = 3;
    o.legacy_brokers = 1;  // broker 3 stops at Produce v13
    o.seed = 7;
    o.topics = {{"t", 3, 20}};
    return o;
  }
  void SetUp() override {
    cluster_.start();
    UpstreamConfig config;
    config.bootstrap_servers = split(cluster_.bootstrap());
    upstream_ = std::make_unique<Upstream>(&loop_, config, [this](const MetadataUpdate& u) {
      for (const auto& [name, leadership] : u.topics) last_[name] = leadership;
    });
    ASSERT_TRUE(upstream_->start());
  }
  void TearDown() override {
    upstream_.reset();
    cluster_.stop();
  }

  test_broker::TestCluster cluster_;
  std::unique_ptr<Upstream> upstream_;
  std::map<std::string, TopicLeadership> last_;
};

TEST_F(UpstreamOnTestCluster, NegotiatesProduceV14AndMetadataV12WithEpochsAndTopicIds) {
  upstream_->request_metadata({"t"});
  ASSERT_TRUE(run_until([&] { return last_.contains("t"); }, 5000));
  const TopicLeadership& t = last_["t"];
  ASSERT_EQ(t.partitions.size(), 3u);
  const auto info = cluster_.partition_info("t", 0);
  ASSERT_TRUE(info);
  EXPECT_EQ(t.topic_id, info->topic_id);
  EXPECT_FALSE(t.topic_id.is_zero());
  for (std::int32_t p = 0; p < 3; ++p) {
    const auto truth = cluster_.partition_info("t", p);
    EXPECT_EQ(t.partitions[static_cast<std::size_t>(p)].leader_id, truth->leader);
    EXPECT_EQ(t.partitions[static_cast<std::size_t>(p)].leader_epoch, truth->leader_epoch);
    EXPECT_GE(t.partitions[static_cast<std::size_t>(p)].leader_epoch, 0);
  }

  ASSERT_TRUE(run_until([&] { return upstream_->can_send_produce(1); }, 5000));
  ASSERT_TRUE(run_until([&] { return upstream_->can_send_produce(3); }, 5000));
  EXPECT_EQ(upstream_->produce_version(1), 14);
  EXPECT_EQ(upstream_->produce_version(3), 13);  // the legacy broker
  EXPECT_EQ(upstream_->negotiated_version(1, ApiKey::kMetadata), 12);
  EXPECT_FALSE(capture_->contains("retrying with v0"));  // v3 ApiVersions understood
}

TEST_F(UpstreamOnTestCluster, ProduceV14ByTopicIdGetsItsNameBackAndTheWindow) {
  upstream_->request_metadata({"t"});
  ASSERT_TRUE(run_until([&] { return last_.contains("t"); }, 5000));
  std::int32_t partition = -1, leader = -1;
  for (std::int32_t p = 0; p < 3; ++p) {
    const auto truth = cluster_.partition_info("t", p);
    if (truth->leader != 3) {  // a KIP-1269 broker
      partition = p;
      leader = truth->leader;
      break;
    }
  }
  ASSERT_GE(partition, 0);
  ASSERT_TRUE(run_until([&] { return upstream_->can_send_produce(leader); }, 5000));

  RecordBatchBuilder builder;
  const std::string value = "hello";
  builder.append(1'700'000'000'000, std::nullopt,
                 ByteView(reinterpret_cast<const std::uint8_t*>(value.data()), value.size()));
  const Bytes batch = builder.build();
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 5000;
  ProduceTopicData topic;
  topic.name = "t";
  topic.topic_id = last_["t"].topic_id;  // v13+ names topics by id; the caller fills it
  ProducePartitionData data;
  data.index = partition;
  data.records.data = ByteView(batch);
  topic.partition_data.push_back(data);
  request.topic_data.push_back(topic);

  std::optional<ProduceResult> result;
  std::int16_t sent_as = -1;
  upstream_->send_produce(leader, request, upstream_->produce_version(leader), [&](std::int16_t v, ProduceResult r) {
    sent_as = v;
    result = std::move(r);
  });
  ASSERT_TRUE(run_until([&] { return result.has_value(); }, 5000));
  ASSERT_TRUE(*result) << error_name(result->error());
  ASSERT_EQ((*result)->responses.size(), 1u);
  const auto& topic_response = (*result)->responses[0];
  EXPECT_EQ(sent_as, 14);
  EXPECT_EQ(topic_response.name, "t");
  EXPECT_EQ(topic_response.topic_id, last_["t"].topic_id);
  const auto& p = topic_response.partition_responses.at(0);
  EXPECT_EQ(p.error_code, ErrorCode::kNone);
  EXPECT_EQ(p.base_offset, 0);
  EXPECT_EQ(p.producer_state_batches_to_retain, 20);
  EXPECT_EQ(cluster_.records("t", partition).size(), 1u);
}

}  // namespace
}  // namespace pp::upstream::test
