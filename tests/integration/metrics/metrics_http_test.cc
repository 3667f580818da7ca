// /metrics, /healthz and /readyz over a real socket (docs/design/INTERFACES.md "HTTP
// endpoints"). Every wait is bounded: http_get has a 5 s timeout, polls a
// stated limit, ctest a TIMEOUT.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "metrics/metrics_server.h"
#include "tests/integration/metrics/exposition_text.h"
#include "tests/integration/metrics/http_get.h"
#include "tests/integration/metrics/loop_thread.h"
#include "tests/unit/metrics/collected.h"

namespace pp {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::http_get;
using testing::sample_value;

class MetricsHttpTest : public ::testing::Test {
 protected:
  Metrics metrics_{MetricsConfig{.address = "127.0.0.1:0"}};
  Health health_;
  MetricsServer server_{"127.0.0.1:0", metrics_, health_};
};

TEST_F(MetricsHttpTest, ListensOnAFreePort) {
  EXPECT_NE(server_.port(), 0);
}

TEST_F(MetricsHttpTest, MetricsServesTheRegistryAndPassesPromtool) {
  auto& o = metrics_.pipeline_observer();
  o.on_inflight_batches({"t", 0}, 3);
  o.on_window({"t", 0}, 20);
  o.on_retry(ErrorCode::kNotLeaderOrFollower);
  o.on_retry(ErrorCode::kNotLeaderOrFollower);
  const std::array<BrokerSample, 1> brokers{BrokerSample{1, 2, true}};
  metrics_.sample(512, brokers);

  const auto r = http_get(server_.port(), "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
  EXPECT_EQ(sample_value(r.body, "produce_proxy_partition_window", {{"topic", "t"}, {"partition", "0"}}), 20);
  EXPECT_EQ(sample_value(r.body, "produce_proxy_inflight_batches", {{"topic", "t"}, {"partition", "0"}}), 3);
  EXPECT_EQ(sample_value(r.body, "produce_proxy_retries_total", {{"error", "NOT_LEADER_OR_FOLLOWER"}}), 2);
  EXPECT_EQ(sample_value(r.body, "produce_proxy_upstream_connected", {{"broker", "1"}}), 1);
  EXPECT_EQ(sample_value(r.body, "produce_proxy_buffered_bytes"), 512);

  // What a scraper really gets, the exposer's own scrape metrics included.
  const auto check = testing::promtool_check_metrics(r.body);
  EXPECT_EQ(check.exit_code, 0) << check.output << "\n" << r.body;
}

TEST_F(MetricsHttpTest, ReadyzIs503BeforeReady200ThenAnd503WhileDraining) {
  auto r = http_get(server_.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready\n");

  health_.set_ready(true);
  r = http_get(server_.port(), "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");

  health_.set_draining();
  r = http_get(server_.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "draining\n");

  // A producer id won during the drain does not make it ready again.
  health_.set_ready(true);
  EXPECT_EQ(http_get(server_.port(), "/readyz").status, 503);
}

TEST_F(MetricsHttpTest, HealthzTurns503WhileTheLoopIsBlockedAndRecovers) {
  testing::LoopThread loop(health_);
  ASSERT_TRUE(eventually([&] { return http_get(server_.port(), "/healthz").status == 200; }, 3s));
  EXPECT_EQ(http_get(server_.port(), "/healthz").body, "ok\n");

  // A callback that holds the loop thread for 2.5 s: no heartbeat, so /healthz
  // must turn 503 about a second after the last beat, while it is still stuck.
  const auto stalled_at = std::chrono::steady_clock::now();
  loop.stall(2500ms);
  testing::HttpResponse r;
  ASSERT_TRUE(eventually([&] { return (r = http_get(server_.port(), "/healthz")).status == 503; }, 2300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - stalled_at, 700ms);
  EXPECT_EQ(r.body.rfind("event loop stalled: last heartbeat ", 0), 0u) << r.body;
  EXPECT_EQ(loop.stalls_done(), 0) << "the 503 must come while the loop is blocked";

  // Once the callback returns the timer fires again and health comes back.
  ASSERT_TRUE(eventually([&] { return http_get(server_.port(), "/healthz").status == 200; }, 3s));
  EXPECT_EQ(loop.stalls_done(), 1);
}

TEST_F(MetricsHttpTest, HealthzIs503WhenNothingBeatsAtAll) {
  // No loop: the daemon forgot its heartbeat timer. Alive at first, then not.
  EXPECT_EQ(http_get(server_.port(), "/healthz").status, 200);
  EXPECT_TRUE(eventually([&] { return http_get(server_.port(), "/healthz").status == 503; }, 2s));
}

TEST_F(MetricsHttpTest, MethodsAndPaths) {
  const auto head = http_get(server_.port(), "/readyz", "HEAD");
  EXPECT_EQ(head.status, 503);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(http_get(server_.port(), "/healthz", "POST").status, 405);
  EXPECT_EQ(http_get(server_.port(), "/nothing-here").status, 404);
}

TEST_F(MetricsHttpTest, ScrapesWhileTheLoopAddsSeries) {
  // prometheus-cpp's locking against ours: new children and updates on one
  // thread, scrapes on civetweb's, under the sanitizers.
  std::atomic<bool> stop{false};
  std::thread loop([&] {
    auto& o = metrics_.pipeline_observer();
    for (int i = 0; !stop.load() && i < 200000; ++i) {
      const TopicPartition tp{"t" + std::to_string(i % 50), i % 64};
      o.on_inflight_batches(tp, i % 7);
      o.on_window(tp, i % 2 ? 20 : 5);
      o.on_retry(static_cast<ErrorCode>(i % 10));
    }
  });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(http_get(server_.port(), "/metrics").status, 200);
  stop = true;
  loop.join();
}

TEST(MetricsServer, AnAddressInUseIsAStartUpError) {
  Metrics metrics{MetricsConfig{}};
  Health health;
  MetricsServer first("127.0.0.1:0", metrics, health);
  const std::string taken = "127.0.0.1:" + std::to_string(first.port());
  try {
    MetricsServer second(taken, metrics, health);
    FAIL() << "a second server bound " << taken;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(taken), std::string::npos) << e.what();
  }
}

TEST(MetricsServer, OutlivesTheMetrics) {
  Health health;
  auto metrics = std::make_unique<Metrics>(MetricsConfig{});
  MetricsServer server("127.0.0.1:0", *metrics, health);
  metrics.reset();
  const auto r = http_get(server.port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("produce_proxy_"), std::string::npos);
}

}  // namespace
}  // namespace pp
