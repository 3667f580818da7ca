// The metadata cache rules (cluster_metadata.h): stale leader epochs are
// ignored, leader changes are seen by id or epoch, a new topic id means the
// topic was recreated.
#include "proxy/upstream/cluster_metadata.h"

#include <gtest/gtest.h>

namespace pp::upstream {
namespace {

struct P {
  std::int32_t index;
  std::int32_t leader;
  std::int32_t epoch = -1;
  ErrorCode error = ErrorCode::kNone;
};

Uuid id_of(std::uint8_t b) {
  Uuid u;
  u.bytes.fill(b);
  return u;
}

MetadataResponse response(const std::string& topic, std::vector<P> partitions, Uuid topic_id = {},
                          std::vector<std::int32_t> brokers = {1, 2, 3}) {
  MetadataResponse r;
  for (std::int32_t b : brokers) r.brokers.push_back({b, "host" + std::to_string(b), 9092, {}, {}});
  MetadataResponseTopic t;
  t.name = topic;
  t.topic_id = topic_id;
  for (const P& p : partitions) {
    MetadataResponsePartition mp;
    mp.partition_index = p.index;
    mp.leader_id = p.leader;
    mp.leader_epoch = p.epoch;
    mp.error_code = p.error;
    t.partitions.push_back(mp);
  }
  r.topics.push_back(t);
  return r;
}

TEST(ClusterMetadata, FirstResponseIsTakenWhole) {
  ClusterMetadata m;
  EXPECT_FALSE(m.has_responses());
  const auto changes = m.apply(response("t", {{0, 1, 5}, {1, 2, 7}}, id_of(9)));
  EXPECT_TRUE(m.has_responses());
  EXPECT_EQ(changes.brokers_added, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_TRUE(changes.leader_changes.empty());
  ASSERT_NE(m.topic("t"), nullptr);
  EXPECT_EQ(m.topic("t")->topic_id, id_of(9));
  ASSERT_EQ(m.topic("t")->partitions.size(), 2u);
  EXPECT_EQ(m.topic("t")->partitions[1].leader_id, 2);
  EXPECT_EQ(m.topic("t")->partitions[1].leader_epoch, 7);
  EXPECT_EQ(m.topic_name(id_of(9)), "t");
  EXPECT_EQ(m.broker(2)->to_string(), "host2:9092");
}

TEST(ClusterMetadata, LowerLeaderEpochIsStaleAndIgnored) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 5}, {1, 2, 7}}));
  // A lagging broker still thinks partition 0 is led by 3 at epoch 4.
  const auto changes = m.apply(response("t", {{0, 3, 4}, {1, 2, 7}}));
  EXPECT_EQ(changes.stale_partitions, 1u);
  EXPECT_TRUE(changes.leader_changes.empty());
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 1);
  EXPECT_EQ(m.topic("t")->partitions[0].leader_epoch, 5);
}

TEST(ClusterMetadata, HigherEpochIsALeaderChangeEvenWithTheSameLeader) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 5}}));
  const auto changes = m.apply(response("t", {{0, 1, 6}}));
  ASSERT_EQ(changes.leader_changes.size(), 1u);
  EXPECT_EQ(changes.leader_changes[0].old_epoch, 5);
  EXPECT_EQ(changes.leader_changes[0].new_epoch, 6);
  EXPECT_EQ(changes.leader_changes[0].new_leader, 1);
}

TEST(ClusterMetadata, WithoutEpochsTheLeaderIdAloneTells) {
  // Metadata < v7 (librdkafka's mock): every epoch is -1.
  ClusterMetadata m;
  m.apply(response("t", {{0, 1}, {1, 2}}));
  auto same = m.apply(response("t", {{0, 1}, {1, 2}}));
  EXPECT_TRUE(same.leader_changes.empty());
  EXPECT_EQ(same.stale_partitions, 0u);
  auto moved = m.apply(response("t", {{0, 3}, {1, 2}}));
  ASSERT_EQ(moved.leader_changes.size(), 1u);
  EXPECT_EQ(moved.leader_changes[0].partition, 0);
  EXPECT_EQ(moved.leader_changes[0].old_leader, 1);
  EXPECT_EQ(moved.leader_changes[0].new_leader, 3);
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 3);
}

TEST(ClusterMetadata, NewTopicIdMeansRecreatedAndLowerEpochsAreTaken) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 40}}, id_of(1)));
  const auto changes = m.apply(response("t", {{0, 2, 0}}, id_of(2)));
  EXPECT_EQ(changes.recreated_topics, (std::vector<std::string>{"t"}));
  EXPECT_EQ(changes.stale_partitions, 0u);
  EXPECT_EQ(m.topic("t")->topic_id, id_of(2));
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 2);
  EXPECT_EQ(m.topic("t")->partitions[0].leader_epoch, 0);
  EXPECT_FALSE(m.topic_name(id_of(1)));
}

TEST(ClusterMetadata, ResponseWithoutTopicIdKeepsTheKnownOne) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 3}}, id_of(7)));
  const auto changes = m.apply(response("t", {{0, 1, 3}}));  // an older broker answered
  EXPECT_TRUE(changes.recreated_topics.empty());
  EXPECT_EQ(m.topic("t")->topic_id, id_of(7));
}

TEST(ClusterMetadata, TopicErrorsPassThroughWithoutPartitions) {
  ClusterMetadata m;
  MetadataResponse r = response("gone", {});
  r.topics[0].error_code = ErrorCode::kUnknownTopicOrPartition;
  m.apply(r);
  ASSERT_NE(m.topic("gone"), nullptr);
  EXPECT_EQ(m.topic("gone")->error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_TRUE(m.topic("gone")->partitions.empty());
}

TEST(ClusterMetadata, PartitionHolesAndErrorsAreReported) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1}, {2, -1, -1, ErrorCode::kLeaderNotAvailable}}));
  const auto& parts = m.topic("t")->partitions;
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(parts[2].error, ErrorCode::kLeaderNotAvailable);
  EXPECT_EQ(parts[2].leader_id, -1);
}

TEST(ClusterMetadata, TopicsNotInTheResponseAreKept) {
  ClusterMetadata m;
  m.apply(response("a", {{0, 1}}));
  m.apply(response("b", {{0, 2}}));
  EXPECT_NE(m.topic("a"), nullptr);
  EXPECT_NE(m.topic("b"), nullptr);
}

TEST(ClusterMetadata, BrokerSetIsReplacedAndMovesAreReported) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1}}, {}, {1, 2, 3}));
  MetadataResponse r = response("t", {{0, 1}}, {}, {1, 2, 4});
  r.brokers[1].host = "elsewhere";
  const auto changes = m.apply(r);
  EXPECT_EQ(changes.brokers_added, (std::vector<std::int32_t>{4}));
  EXPECT_EQ(changes.brokers_removed, (std::vector<std::int32_t>{3}));
  EXPECT_EQ(changes.brokers_moved, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(m.broker(3), nullptr);
}

TEST(ClusterMetadata, ATopLevelErrorChangesNothing) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 4}}, id_of(1), {1, 2, 3}));
  // Metadata v13 (KIP-1102): an error answer with no brokers and no topics.
  MetadataResponse error_answer;
  error_answer.error_code = ErrorCode::kUnknownServerError;
  const auto changes = m.apply(error_answer);
  EXPECT_TRUE(changes.brokers_removed.empty());
  EXPECT_TRUE(changes.topics.empty());
  EXPECT_EQ(m.brokers().size(), 3u);
  ASSERT_NE(m.topic("t"), nullptr);
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 1);
}

TEST(ClusterMetadata, PartitionIndexesNoTopicHasAreIgnored) {
  ClusterMetadata m;
  // A broker's bytes: an index near 2^31 would have sized the table at
  // gigabytes (and +1 overflowed); a negative one is no partition either.
  const auto changes = m.apply(response("t", {{0, 1}, {1, 2}, {INT32_MAX, 3}, {1 << 30, 3}, {-5, 3}}));
  ASSERT_NE(m.topic("t"), nullptr);
  EXPECT_EQ(m.topic("t")->partitions.size(), 2u);
  EXPECT_EQ(changes.out_of_range_partitions, 3u);
  EXPECT_EQ(m.topic("t")->partitions[1].leader_id, 2);
  // The largest index allowed is still taken.
  m.apply(response("u", {{kMaxPartitionIndex, 1}}));
  EXPECT_EQ(m.topic("u")->partitions.size(), static_cast<std::size_t>(kMaxPartitionIndex) + 1);
}

TEST(ClusterMetadata, LearnBrokersAddsAndUpdatesButRemovesNothing) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1}}, {}, {1, 2}));
  std::vector<NodeEndpoint> endpoints(2);
  endpoints[0] = {2, "host2", 9093, {}, {}};  // moved port
  endpoints[1] = {5, "host5", 9092, {}, {}};  // new
  EXPECT_EQ(m.learn_brokers(endpoints), (std::vector<std::int32_t>{2}));
  EXPECT_EQ(m.brokers().size(), 3u);
  EXPECT_EQ(m.broker(2)->port, 9093);
  EXPECT_EQ(m.broker(5)->host, "host5");
}

TEST(ClusterMetadata, LeaderHintOnlyWithANewerEpoch) {
  ClusterMetadata m;
  m.apply(response("t", {{0, 1, 5}}));
  EXPECT_FALSE(m.update_partition_leadership("t", 0, 2, 5));   // not newer
  EXPECT_FALSE(m.update_partition_leadership("t", 0, -1, 9));  // no leader
  EXPECT_FALSE(m.update_partition_leadership("t", 0, 2, -1));  // no epoch
  EXPECT_FALSE(m.update_partition_leadership("t", 4, 2, 9));   // no such partition
  EXPECT_FALSE(m.update_partition_leadership("u", 0, 2, 9));   // no such topic
  EXPECT_TRUE(m.update_partition_leadership("t", 0, 2, 6));
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 2);
  // A refresh from a broker that hasn't seen the move yet is stale now.
  const auto changes = m.apply(response("t", {{0, 1, 5}}));
  EXPECT_EQ(changes.stale_partitions, 1u);
  EXPECT_EQ(m.topic("t")->partitions[0].leader_id, 2);
}

}  // namespace
}  // namespace pp::upstream
