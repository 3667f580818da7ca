// Issue 7's evidence with the real pipeline: the metrics move as the
// producer learns, loses and relearns a KIP-1269 window against the test
// cluster, retries are counted by error name exactly, and no scrape shows more
// batches in flight than the window while leadership is stable.
#include "metrics/metrics.h"
#include "tests/broker/test_cluster.h"
#include "tests/integration/metrics/exposition_text.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

using test_broker::TestCluster;
using test_broker::TestClusterOptions;

class PipelineMetrics : public DriverFixture {
 public:
  std::optional<double> value(const std::string& name, const SampleLabels& labels = {}) {
    return sample_value(metrics_.exposition(), name, labels);
  }
  void start_with_metrics(const std::string& bootstrap) {
    upstream::UpstreamConfig up;
    std::size_t at = 0;
    while (at <= bootstrap.size()) {
      const std::size_t comma = bootstrap.find(',', at);
      up.bootstrap_servers.push_back(bootstrap.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    up.max_in_flight_per_connection = 50;
    PipelineConfig p;
    p.linger_ms = 0;
    p.batch_bytes = 4096;
    p.retry_backoff_ms = 10;
    p.retry_backoff_max_ms = 50;
    driver_ = std::make_unique<ProducerDriver>(&loop_, up, p, &metrics_.pipeline_observer());
    ASSERT_TRUE(driver_->start().has_value());
  }
  void produce_and_wait(int runs) {
    const std::int64_t target = submitted_ + runs;
    for (int i = 0; i < runs; ++i) submit("t", 0, 30);
    ASSERT_TRUE(run_until([&] { return completed_ >= target; }, 30000));
    ASSERT_EQ(failed_, 0) << last_error_;
  }

  Metrics metrics_{MetricsConfig{"127.0.0.1:0", true}};
};

const SampleLabels kPartition0{{"topic", "t"}, {"partition", "0"}};

TEST_F(PipelineMetrics, WindowRetriesAndInflightFollowThePipeline) {
  TestClusterOptions options;
  options.brokers = 2;
  options.topics = {{"t", 1, 20}};
  options.rtt_ms = 20;
  TestCluster cluster(options);
  cluster.start();
  ASSERT_TRUE(cluster.move_leader("t", 0, 1).has_value());
  start_with_metrics(cluster.bootstrap());

  // While producing with a stable leader, every scrape: in flight <= window.
  int scrapes = 0;
  net::Timer scraper(&loop_);
  scraper.start(5, 5, [&] {
    const auto inflight = value("produce_proxy_inflight_batches", kPartition0);
    const auto window = value("produce_proxy_partition_window", kPartition0);
    if (inflight && window) {
      ++scrapes;
      EXPECT_LE(*inflight, *window) << "scrape " << scrapes;
    }
  });
  produce_and_wait(60);
  scraper.stop();
  EXPECT_GT(scrapes, 3);
  EXPECT_EQ(value("produce_proxy_partition_window", kPartition0), 20);
  EXPECT_EQ(value("produce_proxy_records_delivered_total"), 60 * 30);

  // Injected errors are counted exactly, under Kafka's name for them.
  const double before = value("produce_proxy_retries_total", {{"error", "NOT_LEADER_OR_FOLLOWER"}}).value_or(0);
  ASSERT_TRUE(cluster.inject_error("t", 0, ErrorCode::kNotLeaderOrFollower, 3).has_value());
  produce_and_wait(10);
  EXPECT_EQ(value("produce_proxy_retries_total", {{"error", "NOT_LEADER_OR_FOLLOWER"}}), before + 3);

  // The leader moves: 5 right after, 20 again once the new leader answered.
  ASSERT_TRUE(cluster.move_leader("t", 0, 2).has_value());
  driver_->upstream().request_metadata({"t"});
  ASSERT_TRUE(run_until(
      [&] {
        return driver_->producer().partition(TopicPartition{"t", 0})->leader_id() == 2;
      },
      10000));
  EXPECT_EQ(value("produce_proxy_partition_window", kPartition0), 5);
  EXPECT_EQ(value("produce_proxy_window_resets_total", kPartition0), 1);
  EXPECT_GE(value("produce_proxy_leader_changes_total").value_or(0), 1);
  produce_and_wait(5);
  EXPECT_EQ(value("produce_proxy_partition_window", kPartition0), 20);
  EXPECT_EQ(cluster.stats().total_window_violations(), 0);
}

}  // namespace
}  // namespace pp::testing
