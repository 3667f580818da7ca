// The pipeline's topic table rules (topic_table.h): stale leader epochs are
// ignored, leader changes are seen by id or epoch, a new topic id means the
// topic was recreated, leader hints only with a newer epoch.
#include "proxy/pipeline/topic_table.h"

#include <gtest/gtest.h>

namespace pp {
namespace {

Uuid id_of(std::uint8_t b) {
  Uuid u;
  u.bytes.fill(b);
  return u;
}

// leader, epoch per partition index
TopicLeadership report(std::vector<std::pair<int, int>> partitions, Uuid topic_id = {}) {
  TopicLeadership t;
  t.topic_id = topic_id;
  for (auto [leader, epoch] : partitions) t.partitions.push_back(PartitionLeadership{ErrorCode::kNone, leader, epoch});
  return t;
}

const PartitionLeadership& at(const TopicTable& table, const std::string& topic, std::int32_t partition) {
  const PartitionLeadership* p = table.partition(TopicPartition{topic, partition});
  EXPECT_NE(p, nullptr);
  return *p;
}

TEST(TopicTable, FirstReportIsTakenWhole) {
  TopicTable m;
  EXPECT_EQ(m.find("t"), nullptr);
  const auto changes = m.apply("t", report({{1, 5}, {2, 7}}, id_of(9)));
  EXPECT_TRUE(changes.leader_changes.empty());
  EXPECT_FALSE(changes.recreated);
  EXPECT_EQ(m.topic_id("t"), id_of(9));
  ASSERT_EQ(m.find("t")->partitions.size(), 2u);
  EXPECT_EQ(at(m, "t", 1).leader_id, 2);
  EXPECT_EQ(at(m, "t", 1).leader_epoch, 7);
  EXPECT_EQ(m.leader_nodes(), (std::set<std::int32_t>{1, 2}));
  EXPECT_TRUE(m.topic_id("unknown").is_zero());
}

TEST(TopicTable, LowerLeaderEpochIsStaleAndIgnored) {
  TopicTable m;
  m.apply("t", report({{1, 5}, {2, 7}}));
  // A lagging broker still thinks partition 0 is led by 3 at epoch 4.
  const auto changes = m.apply("t", report({{3, 4}, {2, 7}}));
  EXPECT_EQ(changes.stale_partitions, 1u);
  EXPECT_TRUE(changes.leader_changes.empty());
  EXPECT_EQ(at(m, "t", 0).leader_id, 1);
  EXPECT_EQ(at(m, "t", 0).leader_epoch, 5);
  EXPECT_EQ(m.leader_nodes(), (std::set<std::int32_t>{1, 2}));
}

TEST(TopicTable, HigherEpochIsALeaderChangeEvenWithTheSameLeader) {
  TopicTable m;
  m.apply("t", report({{1, 5}}));
  const auto changes = m.apply("t", report({{1, 6}}));
  ASSERT_EQ(changes.leader_changes.size(), 1u);
  EXPECT_EQ(changes.leader_changes[0].old_epoch, 5);
  EXPECT_EQ(changes.leader_changes[0].new_epoch, 6);
  EXPECT_EQ(changes.leader_changes[0].new_leader, 1);
}

TEST(TopicTable, WithoutEpochsTheLeaderIdAloneTells) {
  // Metadata < v7 (librdkafka's mock): every epoch is -1.
  TopicTable m;
  m.apply("t", report({{1, -1}, {2, -1}}));
  auto same = m.apply("t", report({{1, -1}, {2, -1}}));
  EXPECT_TRUE(same.leader_changes.empty());
  EXPECT_EQ(same.stale_partitions, 0u);
  auto moved = m.apply("t", report({{3, -1}, {2, -1}}));
  ASSERT_EQ(moved.leader_changes.size(), 1u);
  EXPECT_EQ(moved.leader_changes[0].partition, 0);
  EXPECT_EQ(moved.leader_changes[0].old_leader, 1);
  EXPECT_EQ(moved.leader_changes[0].new_leader, 3);
  EXPECT_EQ(at(m, "t", 0).leader_id, 3);
}

TEST(TopicTable, NewTopicIdMeansRecreatedAndLowerEpochsAreTaken) {
  TopicTable m;
  m.apply("t", report({{1, 40}}, id_of(1)));
  const auto changes = m.apply("t", report({{2, 0}}, id_of(2)));
  EXPECT_TRUE(changes.recreated);
  EXPECT_EQ(changes.stale_partitions, 0u);
  EXPECT_EQ(m.topic_id("t"), id_of(2));
  EXPECT_EQ(at(m, "t", 0).leader_id, 2);
  EXPECT_EQ(at(m, "t", 0).leader_epoch, 0);
}

TEST(TopicTable, ReportWithoutTopicIdKeepsTheKnownOne) {
  TopicTable m;
  m.apply("t", report({{1, 3}}, id_of(7)));
  const auto changes = m.apply("t", report({{1, 3}}));  // an older broker answered
  EXPECT_FALSE(changes.recreated);
  EXPECT_EQ(m.topic_id("t"), id_of(7));
}

// Produce v13 from clients names topics by id: each id finds its topic, an
// id a re-created or forgotten topic had finds nothing, and zero is no id.
TEST(TopicTable, EachIdNamesItsTopicUntilTheTopicIsRecreatedOrForgotten) {
  TopicTable m;
  m.apply("a", report({{1, 0}}, id_of(1)));
  m.apply("b", report({{1, 0}}, id_of(2)));
  m.apply("old", report({{1, 0}}));
  EXPECT_EQ(m.name_of(id_of(1)), "a");
  EXPECT_EQ(m.name_of(id_of(2)), "b");
  EXPECT_EQ(m.name_of(Uuid{}), std::nullopt) << "a topic reported without an id has none";
  m.apply("a", report({{1, 0}}));  // an older broker answered: the id stays
  EXPECT_EQ(m.name_of(id_of(1)), "a");
  m.apply("a", report({{1, 0}}, id_of(3)));  // re-created
  EXPECT_EQ(m.name_of(id_of(1)), std::nullopt);
  EXPECT_EQ(m.name_of(id_of(3)), "a");
  m.forget("b");
  EXPECT_EQ(m.name_of(id_of(2)), std::nullopt);
  EXPECT_EQ(m.name_of(id_of(9)), std::nullopt);
}

TEST(TopicTable, TopicInErrorHasNoPartitions) {
  TopicTable m;
  TopicLeadership gone;
  gone.error = ErrorCode::kUnknownTopicOrPartition;
  m.apply("gone", gone);
  ASSERT_NE(m.find("gone"), nullptr);
  EXPECT_EQ(m.find("gone")->error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(m.partition(TopicPartition{"gone", 0}), nullptr);
}

TEST(TopicTable, TopicsNotInTheReportAreKept) {
  TopicTable m;
  m.apply("a", report({{1, -1}}));
  m.apply("b", report({{2, -1}}));
  EXPECT_NE(m.find("a"), nullptr);
  EXPECT_NE(m.find("b"), nullptr);
  EXPECT_EQ(m.partition(TopicPartition{"a", 1}), nullptr);  // no such partition
  EXPECT_EQ(m.partition(TopicPartition{"a", -1}), nullptr);
}

TEST(TopicTable, LeaderHintOnlyWithANewerEpoch) {
  TopicTable m;
  m.apply("t", report({{1, 5}}));
  EXPECT_FALSE(m.take_leader_hint({"t", 0}, 2, 5));   // not newer
  EXPECT_FALSE(m.take_leader_hint({"t", 0}, -1, 9));  // no leader
  EXPECT_FALSE(m.take_leader_hint({"t", 0}, 2, -1));  // no epoch
  EXPECT_FALSE(m.take_leader_hint({"t", 4}, 2, 9));   // no such partition
  EXPECT_FALSE(m.take_leader_hint({"u", 0}, 2, 9));   // no such topic
  EXPECT_TRUE(m.take_leader_hint({"t", 0}, 2, 6));
  EXPECT_EQ(at(m, "t", 0).leader_id, 2);
  EXPECT_EQ(m.leader_nodes(), (std::set<std::int32_t>{2}));
  // A refresh from a broker that hasn't seen the move yet is stale now.
  const auto changes = m.apply("t", report({{1, 5}}));
  EXPECT_EQ(changes.stale_partitions, 1u);
  EXPECT_EQ(at(m, "t", 0).leader_id, 2);
}

}  // namespace
}  // namespace pp
