// Metadata v0-v13: the proxy is the only broker and leads every partition at
// a constant leader epoch; topics come from the TopicDirectory; null and
// empty topic lists mean what each version says.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "proxy/frontend/metadata_answer.h"

namespace pp {
namespace {

MetadataRequest request_for(std::optional<std::vector<std::string>> names) {
  MetadataRequest r;
  if (!names) {
    r.topics = std::nullopt;
    return r;
  }
  r.topics.emplace();
  for (auto& n : *names) r.topics->push_back(MetadataRequestTopic{{}, n, {}});
  return r;
}

TEST(MetadataQuery, NullAndEmptyTopicListsPerVersion) {
  // v0: an empty list means every topic.
  auto q0 = metadata_query(request_for(std::vector<std::string>{}), 0);
  EXPECT_TRUE(q0.ask_directory);
  EXPECT_FALSE(q0.topics);
  // v1+: null means every topic, empty means none.
  auto q1_null = metadata_query(request_for(std::nullopt), 1);
  EXPECT_TRUE(q1_null.ask_directory);
  EXPECT_FALSE(q1_null.topics);
  auto q1_empty = metadata_query(request_for(std::vector<std::string>{}), 1);
  EXPECT_FALSE(q1_empty.ask_directory);
  // Names once each, in request order.
  auto q = metadata_query(request_for(std::vector<std::string>{"b", "a", "b"}), 5);
  ASSERT_TRUE(q.topics);
  EXPECT_EQ(*q.topics, (std::vector<std::string>{"b", "a"}));
}

TEST(MetadataQuery, AutoTopicCreationIsPassedThroughFromV4AndImpliedBefore) {
  MetadataRequest r = request_for(std::vector<std::string>{"x"});
  r.allow_auto_topic_creation = false;
  EXPECT_FALSE(metadata_query(r, 4).allow_auto_topic_creation);
  EXPECT_TRUE(metadata_query(r, 3).allow_auto_topic_creation);  // the field doesn't exist before v4
}

TEST(MetadataAnswer, TheProxyLeadsEveryPartitionAndUnknownsAreErrors) {
  std::vector<TopicDescription> described = {{"orders", ErrorCode::kNone, {}, false, 2},
                                             {"creating", ErrorCode::kLeaderNotAvailable, {}, false, 0}};
  MetadataRequest r = request_for(std::vector<std::string>{"orders", "creating", "missing"});
  r.topics->push_back(MetadataRequestTopic{Uuid{{1, 2, 3}}, std::nullopt, {}});
  auto response = metadata_answer(r, 12, AdvertisedBroker{"10.0.0.1", 9092}, described);
  ASSERT_EQ(response.brokers.size(), 1u);
  EXPECT_EQ(response.brokers[0].node_id, kProxyNodeId);
  EXPECT_EQ(response.brokers[0].host, "10.0.0.1");
  EXPECT_EQ(response.brokers[0].port, 9092);
  EXPECT_EQ(response.controller_id, kProxyNodeId);
  EXPECT_EQ(response.cluster_id, std::string(kProxyClusterId));
  ASSERT_EQ(response.topics.size(), 4u);
  EXPECT_EQ(response.topics[0].name, "orders");
  ASSERT_EQ(response.topics[0].partitions.size(), 2u);
  for (std::int32_t i = 0; i < 2; ++i) {
    const auto& p = response.topics[0].partitions[static_cast<std::size_t>(i)];
    EXPECT_EQ(p.partition_index, i);
    EXPECT_EQ(p.leader_id, kProxyNodeId);
    EXPECT_EQ(p.leader_epoch, kProxyLeaderEpoch);
    EXPECT_EQ(p.replica_nodes, std::vector<std::int32_t>{kProxyNodeId});
    EXPECT_EQ(p.isr_nodes, std::vector<std::int32_t>{kProxyNodeId});
  }
  EXPECT_EQ(response.topics[1].error_code, ErrorCode::kLeaderNotAvailable);
  EXPECT_TRUE(response.topics[1].partitions.empty());
  EXPECT_EQ(response.topics[2].error_code, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(response.topics[3].error_code, ErrorCode::kUnknownTopicId);
  EXPECT_FALSE(response.topics[3].name);
}

using MetadataSocketTest = test::FrontendFixture;

TEST_F(MetadataSocketTest, EveryVersionAnswersWithTheAdvertisedBrokerAsLeader) {
  FrontendConfig config;
  config.advertised_address = {"proxy.local", 0};  // port 0: the bound port
  start(config);
  auto client = connect();
  for (std::int16_t version = 0; version <= 12; ++version) {
    SCOPED_TRACE(version);
    MetadataRequest request = request_for(std::vector<std::string>{"orders", "nope"});
    ASSERT_TRUE(client->send(ApiKey::kMetadata, version, 1000 + version, request));
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    std::int32_t correlation = 0;
    auto response = test::decode_response<MetadataResponse>(*frame, version, &correlation);
    ASSERT_TRUE(response);
    EXPECT_EQ(correlation, 1000 + version);
    ASSERT_EQ(response->brokers.size(), 1u);
    EXPECT_EQ(response->brokers[0].host, "proxy.local");
    EXPECT_EQ(response->brokers[0].port, frontend_->port());
    if (version >= 1) {
      EXPECT_EQ(response->controller_id, kProxyNodeId);
    }
    if (version >= 2) {
      EXPECT_EQ(response->cluster_id, std::string(kProxyClusterId));
    }
    ASSERT_EQ(response->topics.size(), 2u);
    EXPECT_EQ(response->topics[0].name, "orders");
    ASSERT_EQ(response->topics[0].partitions.size(), 3u);
    EXPECT_EQ(response->topics[0].partitions[2].leader_id, kProxyNodeId);
    if (version >= 7) {
      EXPECT_EQ(response->topics[0].partitions[2].leader_epoch, kProxyLeaderEpoch);
    }
    EXPECT_EQ(response->topics[1].error_code, ErrorCode::kUnknownTopicOrPartition);
  }
}

// KIP-516: from v10 each topic carries the upstream's id, the one a client's
// Produce v13 then names it by; asked by a known id alone (v12+), a topic is
// answered with its name and id.
TEST_F(MetadataSocketTest, TopicIdsFromTheDirectoryFromV10AndTopicsAskedById) {
  Uuid id;
  id.bytes = {0xd1, 0x5e, 0x0a, 0x11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  directory_->add("ided", 2, id);
  start();
  auto client = connect();
  for (std::int16_t version : {9, 10, 11, 12, 13}) {
    SCOPED_TRACE(version);
    ASSERT_TRUE(client->send(ApiKey::kMetadata, version, 1, request_for(std::vector<std::string>{"ided", "orders"})));
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    auto response = test::decode_response<MetadataResponse>(*frame, version);
    ASSERT_TRUE(response);
    ASSERT_EQ(response->topics.size(), 2u);
    EXPECT_EQ(response->topics[0].topic_id, version >= kMetadataTopicIdVersion ? id : Uuid{});
    EXPECT_TRUE(response->topics[1].topic_id.is_zero()) << "a topic the upstream gave no id";
  }
  MetadataRequest by_id;
  by_id.topics.emplace();
  by_id.topics->push_back(MetadataRequestTopic{id, std::nullopt, {}});
  Uuid unknown = id;
  unknown.bytes[0] ^= 0xff;
  by_id.topics->push_back(MetadataRequestTopic{unknown, std::nullopt, {}});
  ASSERT_TRUE(client->send(ApiKey::kMetadata, 12, 2, by_id));
  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  auto response = test::decode_response<MetadataResponse>(*frame, 12);
  ASSERT_TRUE(response);
  ASSERT_EQ(response->topics.size(), 2u);
  EXPECT_EQ(response->topics[0].error_code, ErrorCode::kNone);
  EXPECT_EQ(response->topics[0].name, "ided");
  EXPECT_EQ(response->topics[0].topic_id, id);
  EXPECT_EQ(response->topics[0].partitions.size(), 2u);
  EXPECT_EQ(response->topics[1].error_code, ErrorCode::kUnknownTopicId);
  EXPECT_EQ(response->topics[1].topic_id, unknown);
}

TEST_F(MetadataSocketTest, OneCharacterTopicNamesDecodeInEveryVersion) {
  // librdkafka asks Metadata v0 for topic "t": 3 bytes per entry, which a
  // count check assuming 4-byte nullable strings once refused.
  directory_->add("t", 2);
  start();
  auto client = connect();
  for (std::int16_t version : {0, 1, 4, 9, 12}) {
    SCOPED_TRACE(version);
    ASSERT_TRUE(client->send(ApiKey::kMetadata, version, 1, request_for(std::vector<std::string>{"t"}), "rdkafka"));
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    auto response = test::decode_response<MetadataResponse>(*frame, version);
    ASSERT_TRUE(response);
    ASSERT_EQ(response->topics.size(), 1u);
    EXPECT_EQ(response->topics[0].partitions.size(), 2u);
  }
}

TEST_F(MetadataSocketTest, AllTopicsNoTopicsAndAutoCreationReachTheDirectory) {
  start();
  auto client = connect();
  // v0 empty list: every topic.
  ASSERT_TRUE(client->send(ApiKey::kMetadata, 0, 1, request_for(std::vector<std::string>{})));
  auto all = test::decode_response<MetadataResponse>(*client->read_frame(), 0);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->topics.size(), 2u);
  EXPECT_FALSE(directory_->last_topics);
  // v4 empty list: none, without asking the directory.
  const int calls = directory_->calls;
  ASSERT_TRUE(client->send(ApiKey::kMetadata, 4, 2, request_for(std::vector<std::string>{})));
  auto none = test::decode_response<MetadataResponse>(*client->read_frame(), 4);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->topics.empty());
  EXPECT_EQ(directory_->calls, calls);
  // v4 allow_auto_topic_creation=false is passed through.
  MetadataRequest no_create = request_for(std::vector<std::string>{"orders"});
  no_create.allow_auto_topic_creation = false;
  ASSERT_TRUE(client->send(ApiKey::kMetadata, 4, 3, no_create));
  ASSERT_TRUE(client->read_frame());
  EXPECT_FALSE(directory_->last_auto_create);
}

}  // namespace
}  // namespace pp
