// Issue 4's evidence against the KIP-1269 test cluster: learned windows, the
// reset to 5 on a move to a legacy broker, the first-ack rule, and
// exactly-once delivery in order, checked with the cluster's inspection API.
#include "tests/broker/test_cluster.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

using test_broker::TestCluster;
using test_broker::TestClusterOptions;

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

TEST_F(TestClusterPipeline, LearnedWindowOfTwentyIsUsedAndFiveIsNeverExceeded) {
  TestClusterOptions options;
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

TEST_F(TestClusterPipeline, MoveToALegacyBrokerResetsTheWindowAndMovingBackRelearnsIt) {
  TestClusterOptions options;
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

TEST_F(TestClusterPipeline, FirstBatchFailingTwiceHoldsItsPartitionOnlyAndEverythingLandsOnce) {
  TestClusterOptions options;
  options.brokers = 2;
  options.topics = {{"t", 4, 20}};
  TestCluster cluster(options);
  cluster.start();
  ASSERT_TRUE(cluster.inject_error("t", 0, ErrorCode::kNotLeaderOrFollower, 2).has_value());
  start_driver(cluster.bootstrap(), small_batches(), 50);
  for (int i = 0; i < 20; ++i) {
    for (int p = 0; p < 4; ++p) submit("t", p, 30);
  }
  ASSERT_TRUE(run_until([&] { return all_completed(); }, 30000));
  EXPECT_EQ(failed_, 0) << last_error_;
  expect_exactly_once(cluster);
  const auto batches = cluster.batches("t", 0);
  ASSERT_FALSE(batches.empty());
  EXPECT_EQ(batches.front().base_sequence, 0) << "sequence 0 is the first batch in the log";
}

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
