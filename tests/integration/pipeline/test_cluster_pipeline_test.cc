// Issue 4's evidence against the KIP-1269 test cluster: learned windows
// (under each placement of the window in the answer), the reset to 5 on a
// move to a legacy broker, the first-ack rule, the first-sequence rule
// (KAFKA-15591) through topic re-creation and added partitions, and
// exactly-once delivery in order, checked with the cluster's inspection API.
#include <set>

#include "tests/broker/test_cluster.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

using test_broker::NoStateRule;
using test_broker::RetainPlacement;
using test_broker::TestCluster;
using test_broker::TestClusterOptions;

// Counts retries by error and epoch bumps by reason.
class CountingObserver final : public PipelineObserver {
 public:
  void on_retry(ErrorCode error) override { ++retries[error]; }
  void on_epoch_bump(std::string_view reason) override { ++bumps[std::string(reason)]; }
  std::map<ErrorCode, std::int64_t> retries;
  std::map<std::string, std::int64_t> bumps;
};

class TestClusterPipeline : public DriverFixture {
 public:
  // Every partition's log holds exactly the submitted values, in order.
  void expect_exactly_once(TestCluster& cluster) {
    for (const auto& [key, values] : expected_) {
      const auto records = cluster.records(key.first, key.second);
      std::vector<std::string> logged;
      for (const auto& r : records) logged.emplace_back(r.value->begin(), r.value->end());
      ASSERT_EQ(logged.size(), values.size()) << key.first << "-" << key.second;
      EXPECT_TRUE(logged == values) << key.first << "-" << key.second << ": order or content differs";
    }
  }

  static PipelineConfig small_batches() {
    PipelineConfig p;
    p.linger_ms = 0;
    p.batch_bytes = 4096;  // ~35 records of 100 bytes: many batches per partition
    p.retry_backoff_ms = 20;
    p.retry_backoff_max_ms = 200;
    p.delivery_timeout_ms = 60000;
    return p;
  }
};

// The window tests run under each placement of the window in the v14 answer:
// the partition's tag, the topic's (provisional), and both.
class WindowPlacements : public TestClusterPipeline, public ::testing::WithParamInterface<RetainPlacement> {};

TEST_P(WindowPlacements, LearnedWindowOfTwentyIsUsedAndFiveIsNeverExceeded) {
  TestClusterOptions options;
  options.retain_placement = GetParam();
  options.brokers = 3;
  options.topics = {{"w5", 3, 5}, {"w20", 3, 20}};
  options.rtt_ms = 50;
  TestCluster cluster(options);
  cluster.start();
  start_driver(cluster.bootstrap(), small_batches(), 50);
  // Runs arrive one batch's worth at a time, faster than the RTT, so every
  // partition wants far more in flight than its window.
  for (int round = 0; round < 60; ++round) {
    for (const char* topic : {"w5", "w20"}) {
      for (int p = 0; p < 3; ++p) submit(topic, p, 30);
    }
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 60000)) << completed_ << "/" << submitted_;
  EXPECT_EQ(failed_, 0) << last_error_;
  const auto stats = cluster.stats();
  for (const auto& p : stats.partitions) {
    if (p.topic == "w5") {
      EXPECT_LE(p.max_inflight, 5) << "w5-" << p.partition;
    } else {
      EXPECT_EQ(p.max_inflight, 20) << "w20-" << p.partition;
    }
    EXPECT_EQ(p.window_violations, 0) << p.topic << "-" << p.partition;
  }
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(driver_->producer().partition(TopicPartition{"w20", p})->window(), 20);
    EXPECT_EQ(driver_->producer().partition(TopicPartition{"w5", p})->window(), 5);
  }
  expect_exactly_once(cluster);
}

TEST_P(WindowPlacements, MoveToALegacyBrokerResetsTheWindowAndMovingBackRelearnsIt) {
  TestClusterOptions options;
  options.retain_placement = GetParam();
  options.brokers = 2;
  options.legacy_brokers = 1;  // broker 2 speaks Produce <= v13, window 5
  options.topics = {{"t", 1, 20}};
  options.rtt_ms = 30;
  TestCluster cluster(options);
  cluster.start();
  ASSERT_TRUE(cluster.move_leader("t", 0, 1).has_value());
  start_driver(cluster.bootstrap(), small_batches(), 50);
  const TopicPartition tp{"t", 0};
  auto produce_some = [&] {
    const std::int64_t target = submitted_ + 40;
    for (int i = 0; i < 40; ++i) submit("t", 0, 30);
    ASSERT_TRUE(run_until([&] { return completed_ >= target; }, 30000));
  };
  produce_some();
  EXPECT_EQ(driver_->producer().partition(tp)->window(), 20);

  ASSERT_TRUE(cluster.move_leader("t", 0, 2).has_value());
  driver_->upstream().request_metadata({"t"});
  ASSERT_TRUE(run_until([&] { return driver_->producer().partition(tp)->leader_id() == 2; }, 10000));
  EXPECT_EQ(driver_->producer().partition(tp)->window(), 5);
  const int violations_before = static_cast<int>(cluster.stats().total_window_violations());
  produce_some();
  EXPECT_EQ(driver_->producer().partition(tp)->window(), 5) << "a legacy leader's window stays 5";
  EXPECT_EQ(cluster.stats().total_window_violations(), violations_before);

  ASSERT_TRUE(cluster.move_leader("t", 0, 1).has_value());
  driver_->upstream().request_metadata({"t"});
  ASSERT_TRUE(run_until([&] { return driver_->producer().partition(tp)->leader_id() == 1; }, 10000));
  produce_some();
  EXPECT_EQ(driver_->producer().partition(tp)->window(), 20) << "learned again from the new leader";
  EXPECT_EQ(failed_, 0) << last_error_;
  EXPECT_EQ(cluster.stats().total_window_violations(), 0);
  expect_exactly_once(cluster);
}

INSTANTIATE_TEST_SUITE_P(Placements, WindowPlacements,
                         ::testing::Values(RetainPlacement::kPartition, RetainPlacement::kTopic,
                                           RetainPlacement::kBoth),
                         [](const ::testing::TestParamInfo<RetainPlacement>& info) {
                           return std::string(test_broker::to_string(info.param));
                         });

// The first-sequence rule's tests run against a broker without it (2.5-4.4)
// and with it (4.5, KAFKA-15591).
class FirstSequence : public TestClusterPipeline, public ::testing::WithParamInterface<NoStateRule> {
 public:
  // Every record of `topic`-`partition` in the log is one submitted there,
  // once, in submission order; and every one of `required` is there.
  void expect_in_order_once(TestCluster& cluster, const std::string& topic, std::int32_t partition,
                            const std::set<std::string>& required) {
    const auto& submitted = expected_[{topic, partition}];
    std::size_t at = 0;
    std::set<std::string> seen;
    for (const auto& r : cluster.records(topic, partition)) {
      const std::string v(r.value->begin(), r.value->end());
      while (at < submitted.size() && submitted[at] != v) ++at;
      ASSERT_LT(at, submitted.size()) << topic << "-" << partition << ": " << v << " duplicated or out of order";
      ++at;
      seen.insert(v);
    }
    for (const auto& v : required) EXPECT_TRUE(seen.contains(v)) << v << " is missing";
  }
  std::set<std::string> submitted_from(const std::string& topic, std::int32_t partition, std::size_t first) {
    const auto& all = expected_[{topic, partition}];
    return {all.begin() + static_cast<std::ptrdiff_t>(std::min(first, all.size())), all.end()};
  }

  CountingObserver counts_;
};

TEST_P(FirstSequence, FirstBatchFailingTwiceHoldsItsPartitionOnlyAndEverythingLandsOnce) {
  TestClusterOptions options;
  options.no_state_rule = GetParam();
  options.brokers = 2;
  options.topics = {{"t", 4, 20}};
  TestCluster cluster(options);
  cluster.start();
  ASSERT_TRUE(cluster.inject_error("t", 0, ErrorCode::kNotLeaderOrFollower, 2).has_value());
  start_driver(cluster.bootstrap(), small_batches(), 50, &counts_);
  for (int i = 0; i < 20; ++i) {
    for (int p = 0; p < 4; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000));
  EXPECT_EQ(failed_, 0) << last_error_;
  expect_exactly_once(cluster);
  const auto batches = cluster.batches("t", 0);
  ASSERT_FALSE(batches.empty());
  EXPECT_EQ(batches.front().base_sequence, 0) << "sequence 0 is the first batch in the log";
  EXPECT_EQ(counts_.retries[ErrorCode::kOutOfOrderSequenceNumber], 0);
}

// The first batch is refused for good and never appended (an error about the
// whole batch); the runs queued behind it must not continue its sequence into
// the still never-written partition.
TEST_P(FirstSequence, AFirstBatchRefusedForGoodIsFollowedByLaterOnesFromSequenceZero) {
  TestClusterOptions options;
  options.no_state_rule = GetParam();
  options.brokers = 1;
  options.topics = {{"t", 2, 5}};
  options.rtt_ms = 20;
  TestCluster cluster(options);
  cluster.start();
  ASSERT_TRUE(cluster.inject_error("t", 0, ErrorCode::kRecordListTooLarge, 1).has_value());
  start_driver(cluster.bootstrap(), small_batches(), 50, &counts_);
  for (int i = 0; i < 20; ++i) {
    for (int p = 0; p < 2; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000));
  EXPECT_GT(failed_, 0) << "the refused first batch's runs fail";
  expect_in_order_once(cluster, "t", 0, {});
  EXPECT_EQ(cluster.records("t", 0).size(), static_cast<std::size_t>(20 - failed_) * 30) << "nothing else lost";
  const auto batches = cluster.batches("t", 0);
  ASSERT_FALSE(batches.empty());
  EXPECT_EQ(batches.front().base_sequence, 0);
  EXPECT_EQ(counts_.retries[ErrorCode::kOutOfOrderSequenceNumber], 0);
}

// A topic deleted and created again while batches are in flight: what follows
// goes into the new, never-written log from sequence 0 (an epoch bump), never
// continuing the old log's sequence; nothing is lost or written twice.
TEST_P(FirstSequence, ATopicDeletedAndRecreatedMidStreamStartsItsNewLogAtSequenceZero) {
  TestClusterOptions options;
  options.no_state_rule = GetParam();
  options.brokers = 2;
  options.topics = {{"t", 2, 5}};
  options.rtt_ms = 20;
  TestCluster cluster(options);
  cluster.start();
  start_driver(cluster.bootstrap(), small_batches(), 50, &counts_);
  for (int i = 0; i < 10; ++i) {
    for (int p = 0; p < 2; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return completed_ >= 4; }, 30000));  // some acked, the rest in flight or queued
  ASSERT_TRUE(cluster.delete_topic("t").has_value());
  ASSERT_TRUE(cluster.create_topic({"t", 2, 5}).has_value());
  const std::size_t after = expected_[{"t", 0}].size();
  for (int i = 0; i < 10; ++i) {
    for (int p = 0; p < 2; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000)) << completed_ << "/" << submitted_;
  EXPECT_EQ(failed_, 0) << last_error_;
  for (int p = 0; p < 2; ++p) {
    expect_in_order_once(cluster, "t", p, submitted_from("t", p, after));
    const auto batches = cluster.batches("t", p);
    ASSERT_FALSE(batches.empty());
    EXPECT_EQ(batches.front().base_sequence, 0) << "t-" << p << ": the new log starts at sequence 0";
  }
  EXPECT_EQ(counts_.retries[ErrorCode::kOutOfOrderSequenceNumber], 0) << "no first sequence was refused";
  EXPECT_GE(counts_.bumps["topic_recreated"], 1);
}

// CreatePartitions mid-stream: the new partitions start at sequence 0 under
// the current epoch, the old ones go on.
TEST_P(FirstSequence, PartitionsAddedMidStreamStartAtSequenceZero) {
  TestClusterOptions options;
  options.no_state_rule = GetParam();
  options.brokers = 2;
  options.topics = {{"t", 2, 5}};
  options.rtt_ms = 20;
  TestCluster cluster(options);
  cluster.start();
  start_driver(cluster.bootstrap(), small_batches(), 50, &counts_);
  for (int i = 0; i < 10; ++i) {
    for (int p = 0; p < 2; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return completed_ >= 4; }, 30000));
  ASSERT_TRUE(cluster.create_partitions("t", 4).has_value());
  // Clients learn of the new partitions from metadata, as the proxy does;
  // records for a partition its metadata does not show yet are refused
  // UNKNOWN_TOPIC_OR_PARTITION (retriable), which is not under test here.
  driver_->upstream().request_metadata({"t"});
  ASSERT_TRUE(run_until(
      [&] {
        return driver_->producer().topics().partition(TopicPartition{"t", 3}) != nullptr;
      },
      10000));
  for (int i = 0; i < 10; ++i) {
    for (int p = 0; p < 4; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000)) << completed_ << "/" << submitted_;
  EXPECT_EQ(failed_, 0) << last_error_;
  expect_exactly_once(cluster);
  for (int p = 2; p < 4; ++p) {
    const auto batches = cluster.batches("t", p);
    ASSERT_FALSE(batches.empty());
    EXPECT_EQ(batches.front().base_sequence, 0) << "t-" << p;
  }
  EXPECT_EQ(counts_.retries[ErrorCode::kOutOfOrderSequenceNumber], 0);
  EXPECT_EQ(counts_.bumps["out_of_order_sequence"] + counts_.bumps["first_sequence"], 0);
}

INSTANTIATE_TEST_SUITE_P(Rules, FirstSequence, ::testing::Values(NoStateRule::kKafka2_5, NoStateRule::kKafka4_5),
                         [](const ::testing::TestParamInfo<NoStateRule>& info) {
                           return info.param == NoStateRule::kKafka4_5 ? std::string("Kafka4_5")
                                                                       : std::string("Kafka2_5");
                         });

// apache/kafka PR #23853's scenario: a fresh 64-partition topic whose
// partitions each answer NOT_LEADER_OR_FOLLOWER to their first request.
TEST_F(TestClusterPipeline, FreshTopicWhosePartitionsAllRefuseTheirFirstRequest) {
  TestClusterOptions options;
  options.brokers = 3;
  options.topics = {{"fresh", 64, 5}};
  options.no_state_rule = test_broker::NoStateRule::kKafka4_5;  // a never-written partition wants seq 0
  TestCluster cluster(options);
  cluster.start();
  for (int p = 0; p < 64; ++p) {
    ASSERT_TRUE(cluster.inject_error("fresh", p, ErrorCode::kNotLeaderOrFollower, 1).has_value());
  }
  start_driver(cluster.bootstrap(), small_batches(), 50);
  for (int round = 0; round < 5; ++round) {
    for (int p = 0; p < 64; ++p) submit("fresh", p, 10);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000)) << completed_ << "/" << submitted_;
  EXPECT_EQ(failed_, 0) << last_error_;
  expect_exactly_once(cluster);
}

}  // namespace
}  // namespace pp::testing
