// The broker directory (broker_directory.h): the broker set is replaced by
// each answer, KIP-951 endpoints add without removing; read_topics shapes an
// answer's topics densely by index and drops indexes no topic has.
#include "proxy/upstream/broker_directory.h"

#include <gtest/gtest.h>

namespace pp::upstream {
namespace {

struct P {
  std::int32_t index;
  std::int32_t leader;
  std::int32_t epoch = -1;
  ErrorCode error = ErrorCode::kNone;
};

MetadataResponse response(const std::string& topic, std::vector<P> partitions,
                          std::vector<std::int32_t> brokers = {1, 2, 3}) {
  MetadataResponse r;
  for (std::int32_t b : brokers) r.brokers.push_back({b, "host" + std::to_string(b), 9092, {}, {}});
  MetadataResponseTopic t;
  t.name = topic;
  t.topic_id.bytes.fill(9);
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

const TopicLeadership& only_topic(const TopicsRead& read) {
  EXPECT_EQ(read.update.topics.size(), 1u);
  return read.update.topics.at(0).second;
}

TEST(BrokerDirectory, FirstAnswerAddsEveryBroker) {
  BrokerDirectory d;
  const auto changes = d.apply(response("t", {{0, 1}}).brokers);
  EXPECT_EQ(changes.added, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(d.find(2)->to_string(), "host2:9092");
  EXPECT_EQ(d.find(7), nullptr);
}

TEST(BrokerDirectory, BrokerSetIsReplacedAndMovesAreReported) {
  BrokerDirectory d;
  d.apply(response("t", {{0, 1}}, {1, 2, 3}).brokers);
  MetadataResponse r = response("t", {{0, 1}}, {1, 2, 4});
  r.brokers[1].host = "elsewhere";
  const auto changes = d.apply(r.brokers);
  EXPECT_EQ(changes.added, (std::vector<std::int32_t>{4}));
  EXPECT_EQ(changes.removed, (std::vector<std::int32_t>{3}));
  EXPECT_EQ(changes.moved, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(d.find(3), nullptr);
}

TEST(BrokerDirectory, LearnAddsAndUpdatesButRemovesNothing) {
  BrokerDirectory d;
  d.apply(response("t", {{0, 1}}, {1, 2}).brokers);
  std::vector<NodeEndpoint> endpoints(2);
  endpoints[0] = {2, "host2", 9093, {}, {}};  // moved port
  endpoints[1] = {5, "host5", 9092, {}, {}};  // new
  EXPECT_EQ(d.learn(endpoints), (std::vector<std::int32_t>{2}));
  EXPECT_EQ(d.all().size(), 3u);
  EXPECT_EQ(d.find(2)->port, 9093);
  EXPECT_EQ(d.find(5)->host, "host5");
}

TEST(ReadTopics, PartitionsAreDenseByIndexWithHolesReportedUnknown) {
  const TopicsRead read = read_topics(response("t", {{0, 1, 4}, {2, -1, -1, ErrorCode::kLeaderNotAvailable}}));
  const TopicLeadership& t = only_topic(read);
  ASSERT_EQ(t.partitions.size(), 3u);
  EXPECT_EQ(t.partitions[0].leader_id, 1);
  EXPECT_EQ(t.partitions[0].leader_epoch, 4);
  EXPECT_EQ(t.partitions[1].error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(t.partitions[2].error, ErrorCode::kLeaderNotAvailable);
  EXPECT_EQ(t.partitions[2].leader_id, -1);
  EXPECT_EQ(read.update.topics[0].first, "t");
  EXPECT_FALSE(t.topic_id.is_zero());
}

TEST(ReadTopics, TopicErrorsPassThroughWithoutPartitions) {
  MetadataResponse r = response("gone", {{0, 1}});
  r.topics[0].error_code = ErrorCode::kUnknownTopicOrPartition;
  const TopicsRead read = read_topics(r);
  const TopicLeadership& t = only_topic(read);
  EXPECT_EQ(t.error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_TRUE(t.partitions.empty());
}

TEST(ReadTopics, UnnamedTopicsAreSkipped) {
  MetadataResponse r = response("t", {{0, 1}});
  r.topics[0].name = std::nullopt;
  EXPECT_TRUE(read_topics(r).update.topics.empty());
}

TEST(ReadTopics, TopicsNobodyAskedAboutAreIgnored) {
  MetadataResponse r = response("asked", {{0, 1}});
  MetadataResponse other = response("pushed", {{0, 2}});
  r.topics.push_back(other.topics[0]);
  const std::set<std::string> asked = {"asked"};
  const TopicsRead read = read_topics(r, &asked);
  EXPECT_EQ(only_topic(read).partitions.size(), 1u);
  EXPECT_EQ(read.update.topics[0].first, "asked");
  EXPECT_EQ(read.unasked_topics, 1u);
}

TEST(ReadTopics, PartitionIndexesNoTopicHasAreIgnored) {
  // A broker's bytes: an index near 2^31 would have sized the table at
  // gigabytes (and +1 overflowed); a negative one is no partition either.
  const TopicsRead read = read_topics(response("t", {{0, 1}, {1, 2}, {INT32_MAX, 3}, {1 << 30, 3}, {-5, 3}}));
  const TopicLeadership& t = only_topic(read);
  EXPECT_EQ(t.partitions.size(), 2u);
  EXPECT_EQ(read.out_of_range_partitions, 3u);
  EXPECT_EQ(t.partitions[1].leader_id, 2);
  // The largest index allowed is still taken.
  const TopicsRead largest = read_topics(response("u", {{kMaxPartitionIndex, 1}}));
  EXPECT_EQ(only_topic(largest).partitions.size(), static_cast<std::size_t>(kMaxPartitionIndex) + 1);
}

}  // namespace
}  // namespace pp::upstream
