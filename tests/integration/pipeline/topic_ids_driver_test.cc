// The daemon's TopicDirectory (FollowedTopics) against real brokers: the ids
// it hands clients are the upstream cluster's, each names its topic, and
// Produce v13 is offered only by an upstream that serves it (the KIP-1269
// test cluster does; librdkafka's mock, at Produce v7 and Metadata v2, has
// no ids at all).
#include "daemon/mock_cluster.h"
#include "tests/broker/test_cluster.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

class TopicIdsDriver : public DriverFixture {
 public:
  // The directory's answer for one topic, as a client's Metadata gets it.
  TopicDescription describe_one(const std::string& topic) {
    std::optional<std::vector<TopicDescription>> described;
    driver_->followed_topics().describe(std::vector<std::string>{topic}, false,
                                        [&](std::vector<TopicDescription> d) { described = std::move(d); });
    EXPECT_TRUE(run_until([&] { return described.has_value(); }, 15000));
    if (!described || described->size() != 1) return {};
    return described->front();
  }
};

TEST_F(TopicIdsDriver, TheTestClusterOffersIdsAndEachIdNamesItsTopic) {
  test_broker::TestClusterOptions options;
  options.brokers = 2;
  options.topics = {{"ided", 2, 5}, {"other", 1, 5}};
  test_broker::TestCluster cluster(options);
  cluster.start();
  start_driver(cluster.bootstrap(), PipelineConfig{});
  const TopicDescription ided = describe_one("ided");
  const TopicDescription other = describe_one("other");
  ASSERT_EQ(ided.error, ErrorCode::kNone);
  EXPECT_FALSE(ided.topic_id.is_zero());
  EXPECT_NE(ided.topic_id, other.topic_id);
  EXPECT_EQ(driver_->followed_topics().topic_name(ided.topic_id), "ided");
  EXPECT_EQ(driver_->followed_topics().topic_name(other.topic_id), "other");
  EXPECT_EQ(driver_->followed_topics().topic_name(Uuid{}), std::nullopt);
  EXPECT_TRUE(driver_->followed_topics().offers_topic_ids());
  // The id is the cluster's own: the pipeline names the topic by it upstream
  // (Produce v14), and the cluster takes the records.
  submit("ided", 0, 10);
  submit("ided", 1, 10);
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 20000));
  EXPECT_EQ(failed_, 0) << last_error_;
  EXPECT_EQ(cluster.records("ided", 0).size(), 10u);
  EXPECT_EQ(cluster.records("ided", 1).size(), 10u);
}

TEST_F(TopicIdsDriver, AnUpstreamWithoutIdsKeepsClientsOnProduceV12) {
  MockCluster mock(1);
  mock.create_topic("old", 2);
  start_driver(mock.bootstraps(), PipelineConfig{});
  const TopicDescription old = describe_one("old");
  ASSERT_EQ(old.error, ErrorCode::kNone);
  EXPECT_EQ(old.partition_count, 2);
  EXPECT_TRUE(old.topic_id.is_zero());
  EXPECT_FALSE(driver_->followed_topics().offers_topic_ids());
  EXPECT_EQ(driver_->followed_topics().topic_name(old.topic_id), std::nullopt);
}

}  // namespace
}  // namespace pp::testing
