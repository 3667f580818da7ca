// A real Prometheus server scrapes our /metrics once a second; its query API
// then reports produce_proxy_partition_window as the pipeline set it: 20 once
// learned, 5 right after a leader move, 20 again (issue 7's evidence, with
// the observer driven by hand; the lead's end-to-end test drives it with the
// pipeline). Bounded: Prometheus gets 30 s to start, each value 20 s to show.
#include <gtest/gtest.h>

#include <chrono>

#include "metrics/metrics_server.h"
#include "tests/integration/metrics/http_get.h"
#include "tests/integration/metrics/prometheus_server.h"

namespace pp {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::PrometheusServer;

class PrometheusScrapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(PrometheusServer::kBinary, X_OK) != 0) {
      FAIL() << PrometheusServer::kBinary << " missing: scripts/setup.sh installs Debian's prometheus";
    }
  }

  // Waits until Prometheus' answer to `promql` is `expected`; returns the last answer.
  std::string wait_for(const PrometheusServer& prometheus, const std::string& promql, const std::string& expected) {
    std::string last;
    eventually(
        [&] {
          last = prometheus.query(promql).body;
          return PrometheusServer::single_value(last) == expected;
        },
        20s, 250ms);
    return last;
  }

  Metrics metrics_{MetricsConfig{}};
  Health health_;
  MetricsServer server_{"127.0.0.1:0", metrics_, health_};
};

TEST_F(PrometheusScrapeTest, QueryApiSeesTheWindowAsTheObserverMovesIt) {
  PipelineObserver& o = metrics_.pipeline_observer();
  const TopicPartition tp{"retain20", 0};
  o.on_inflight_batches(tp, 1);
  o.on_window(tp, 20);

  PrometheusServer prometheus({"127.0.0.1:" + std::to_string(server_.port())}, 30s);
  ASSERT_TRUE(prometheus.ready()) << prometheus.log();

  const std::string window = R"(produce_proxy_partition_window{topic="retain20",partition="0"})";
  std::string answer = wait_for(prometheus, window, "20");
  ASSERT_EQ(PrometheusServer::single_value(answer), "20") << answer << "\n" << prometheus.log();
  EXPECT_NE(answer.find(R"("job":"produce-proxy")"), std::string::npos) << answer;

  // The scrape itself was healthy.
  answer = wait_for(prometheus, R"(up{job="produce-proxy"})", "1");
  EXPECT_EQ(PrometheusServer::single_value(answer), "1") << answer;

  // The partition's leader moves: the window drops to 5 until its first response.
  o.on_leader_change(tp);
  o.on_window_reset(tp);
  o.on_window(tp, 5);
  answer = wait_for(prometheus, window, "5");
  EXPECT_EQ(PrometheusServer::single_value(answer), "5") << answer;
  answer = wait_for(prometheus, R"(produce_proxy_window_resets_total{topic="retain20",partition="0"})", "1");
  EXPECT_EQ(PrometheusServer::single_value(answer), "1") << answer;

  o.on_window(tp, 20);
  answer = wait_for(prometheus, window, "20");
  EXPECT_EQ(PrometheusServer::single_value(answer), "20") << answer;

  // Counters by Kafka error name arrive with their label intact.
  for (int i = 0; i < 3; ++i) o.on_retry(ErrorCode::kNotLeaderOrFollower);
  answer = wait_for(prometheus, R"(produce_proxy_retries_total{error="NOT_LEADER_OR_FOLLOWER"})", "3");
  EXPECT_EQ(PrometheusServer::single_value(answer), "3") << answer;
}

}  // namespace
}  // namespace pp
