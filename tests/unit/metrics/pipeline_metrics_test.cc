// The pipeline observer moves exactly the series docs/design/INTERFACES.md names, and
// partition_labels=false folds per-partition series into per-topic ones.
#include "metrics/pipeline_metrics.h"

#include <gtest/gtest.h>

#include "metrics/metrics.h"
#include "tests/unit/metrics/collected.h"

namespace pp {
namespace {

using testing::value_of;

std::string n(const char* suffix) {
  return std::string("produce_proxy_") + suffix;
}

testing::LabelMap part(const std::string& topic, int partition) {
  return {{"topic", topic}, {"partition", std::to_string(partition)}};
}

class PipelineMetricsTest : public ::testing::Test {
 protected:
  explicit PipelineMetricsTest(bool partition_labels = true)
      : metrics_(MetricsConfig{.partition_labels = partition_labels}), o_(metrics_.pipeline_observer()) {}
  const prometheus::Registry& r() const { return *metrics_.registry(); }

  Metrics metrics_;
  PipelineObserver& o_;
};

TEST_F(PipelineMetricsTest, APartitionShowsWindowFiveFromItsFirstBatch) {
  o_.on_batch_sent({"t", 0}, 10, 1000, false);
  o_.on_inflight_batches({"t", 0}, 1);
  EXPECT_EQ(value_of(r(), n("partition_window"), part("t", 0)), 5);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), part("t", 0)), 1);
  EXPECT_EQ(value_of(r(), n("window_resets_total"), part("t", 0)), 0);
}

TEST_F(PipelineMetricsTest, WindowLearnedThenResetByALeaderMove) {
  // The pipeline's order on a RETAIN-20 topic, then a leader move (response_handler.cc).
  o_.on_inflight_batches({"t", 0}, 1);
  o_.on_window({"t", 0}, 20);
  EXPECT_EQ(value_of(r(), n("partition_window"), part("t", 0)), 20);

  o_.on_leader_change({"t", 0});
  o_.on_window_reset({"t", 0});
  o_.on_window({"t", 0}, 5);
  EXPECT_EQ(value_of(r(), n("partition_window"), part("t", 0)), 5);
  EXPECT_EQ(value_of(r(), n("window_resets_total"), part("t", 0)), 1);
  EXPECT_EQ(value_of(r(), n("leader_changes_total")), 1);

  o_.on_window({"t", 0}, 20);
  EXPECT_EQ(value_of(r(), n("partition_window"), part("t", 0)), 20);
  // The neighbour partition was never touched.
  EXPECT_EQ(value_of(r(), n("partition_window"), part("t", 1)), std::nullopt);
}

TEST_F(PipelineMetricsTest, InflightFollowsTheLastCount) {
  for (int i = 1; i <= 20; ++i) o_.on_inflight_batches({"t", 2}, i);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), part("t", 2)), 20);
  for (int i = 19; i >= 0; --i) o_.on_inflight_batches({"t", 2}, i);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), part("t", 2)), 0);
}

TEST_F(PipelineMetricsTest, RetriesAndFailuresAreCountedByKafkaErrorName) {
  for (int i = 0; i < 7; ++i) o_.on_retry(ErrorCode::kNotLeaderOrFollower);
  o_.on_retry(ErrorCode::kNetworkException);
  EXPECT_EQ(value_of(r(), n("retries_total"), {{"error", "NOT_LEADER_OR_FOLLOWER"}}), 7);
  EXPECT_EQ(value_of(r(), n("retries_total"), {{"error", "NETWORK_EXCEPTION"}}), 1);
  EXPECT_EQ(testing::series_of(r(), n("retries_total")).size(), 2u);

  o_.on_records_failed(ErrorCode::kRequestTimedOut, 40);
  o_.on_records_failed(ErrorCode::kRequestTimedOut, 2);
  o_.on_records_failed(ErrorCode::kMessageTooLarge, 1);
  EXPECT_EQ(value_of(r(), n("records_failed_total"), {{"error", "REQUEST_TIMED_OUT"}}), 42);
  EXPECT_EQ(value_of(r(), n("records_failed_total"), {{"error", "MESSAGE_TOO_LARGE"}}), 1);
}

TEST_F(PipelineMetricsTest, CountersOfEvents) {
  o_.on_duplicate_sequence();
  o_.on_duplicate_sequence();
  o_.on_epoch_bump("new_producer_id");
  o_.on_epoch_bump("out_of_order_sequence");
  o_.on_epoch_bump("out_of_order_sequence");
  o_.on_records_delivered(1000);
  o_.on_records_delivered(24);
  EXPECT_EQ(value_of(r(), n("duplicate_sequence_total")), 2);
  EXPECT_EQ(value_of(r(), n("producer_epoch_bumps_total"), {{"reason", "new_producer_id"}}), 1);
  EXPECT_EQ(value_of(r(), n("producer_epoch_bumps_total"), {{"reason", "out_of_order_sequence"}}), 2);
  EXPECT_EQ(value_of(r(), n("records_delivered_total")), 1024);
}

TEST_F(PipelineMetricsTest, AmbiguousRenumberedByReasonFromZero) {
  EXPECT_EQ(value_of(r(), n("ambiguous_renumbered_total"), {{"reason", "epoch_bump"}}), 0);
  EXPECT_EQ(value_of(r(), n("ambiguous_renumbered_total"), {{"reason", "record_errors"}}), 0);
  EXPECT_EQ(value_of(r(), n("ambiguous_renumbered_total"), {{"reason", "bisection"}}), 0);
  o_.on_ambiguous_renumbered("epoch_bump", 3);
  o_.on_ambiguous_renumbered("record_errors", 1);
  o_.on_ambiguous_renumbered("epoch_bump", 2);
  EXPECT_EQ(value_of(r(), n("ambiguous_renumbered_total"), {{"reason", "epoch_bump"}}), 5);
  EXPECT_EQ(value_of(r(), n("ambiguous_renumbered_total"), {{"reason", "record_errors"}}), 1);
}

TEST_F(PipelineMetricsTest, IdentityChangesByStateEntered) {
  o_.on_identity_state("INITIALIZING");
  o_.on_identity_state("READY");
  o_.on_identity_state("UNINITIALIZED");
  o_.on_identity_state("INITIALIZING");
  EXPECT_EQ(value_of(r(), n("producer_identity_changes_total"), {{"state", "INITIALIZING"}}), 2);
  EXPECT_EQ(value_of(r(), n("producer_identity_changes_total"), {{"state", "READY"}}), 1);
}

TEST_F(PipelineMetricsTest, UpstreamRequestsByBrokerAndTheirRoundTrip) {
  o_.on_produce_request(1);
  o_.on_produce_request(1);
  o_.on_produce_request(3);
  o_.on_produce_response(1, 250);
  o_.on_produce_response(3, 2);
  EXPECT_EQ(value_of(r(), n("upstream_requests_total"), {{"broker", "1"}}), 2);
  EXPECT_EQ(value_of(r(), n("upstream_requests_total"), {{"broker", "3"}}), 1);
  const auto families = r().Collect();
  const auto* h = testing::histogram_of(families, n("upstream_request_duration_seconds"));
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->sample_count, 2u);
  EXPECT_DOUBLE_EQ(h->sample_sum, 0.252);
  // 2 ms falls in the 0.0025 s bucket (cumulative), 250 ms first in 0.25 s.
  for (const auto& b : h->bucket) {
    if (b.upper_bound == 0.001) {
      EXPECT_EQ(b.cumulative_count, 0u);
    }
    if (b.upper_bound == 0.0025) {
      EXPECT_EQ(b.cumulative_count, 1u);
    }
    if (b.upper_bound == 0.25) {
      EXPECT_EQ(b.cumulative_count, 2u);
    }
  }
}

TEST_F(PipelineMetricsTest, BatchSizesCountFirstSendsOnly) {
  o_.on_batch_sent({"t", 0}, 100, 50000, false);
  o_.on_batch_sent({"t", 0}, 1, 80, false);
  o_.on_batch_sent({"t", 0}, 100, 50000, true);  // the retry of the first
  const auto families = r().Collect();
  const auto* records = testing::histogram_of(families, n("batch_records"));
  const auto* bytes = testing::histogram_of(families, n("batch_bytes"));
  ASSERT_NE(records, nullptr);
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(records->sample_count, 2u);
  EXPECT_DOUBLE_EQ(records->sample_sum, 101);
  EXPECT_EQ(bytes->sample_count, 2u);
  EXPECT_DOUBLE_EQ(bytes->sample_sum, 50080);
}

class PerTopicTest : public PipelineMetricsTest {
 protected:
  PerTopicTest() : PipelineMetricsTest(false) {}
};

TEST_F(PerTopicTest, PartitionsCollapseIntoOneSeriesPerTopic) {
  for (int p = 0; p < 1000; ++p) {
    o_.on_inflight_batches({"big", p}, 2);
    o_.on_window({"big", p}, 20);
  }
  o_.on_inflight_batches({"small", 0}, 1);
  for (const char* family : {"inflight_batches", "partition_window", "window_resets_total"}) {
    SCOPED_TRACE(family);
    const auto series = testing::series_of(r(), n(family));
    ASSERT_EQ(series.size(), 2u);
    for (const auto& labels : series) {
      EXPECT_EQ(labels.size(), 1u);
      EXPECT_TRUE(labels.count("topic"));
    }
  }
  EXPECT_EQ(value_of(r(), n("inflight_batches"), {{"topic", "big"}}), 2000);
  EXPECT_EQ(value_of(r(), n("partition_window"), {{"topic", "big"}}), 20);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), {{"topic", "small"}}), 1);
  EXPECT_EQ(value_of(r(), n("partition_window"), {{"topic", "small"}}), 5);
}

TEST_F(PerTopicTest, InflightIsTheSumAndWindowTheSmallest) {
  o_.on_inflight_batches({"t", 0}, 3);
  o_.on_inflight_batches({"t", 1}, 4);
  o_.on_window({"t", 0}, 20);
  o_.on_window({"t", 1}, 20);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), {{"topic", "t"}}), 7);
  EXPECT_EQ(value_of(r(), n("partition_window"), {{"topic", "t"}}), 20);

  // One partition's leader moves: the topic's window is that partition's 5...
  o_.on_leader_change({"t", 1});
  o_.on_window_reset({"t", 1});
  o_.on_window({"t", 1}, 5);
  o_.on_inflight_batches({"t", 1}, 0);
  EXPECT_EQ(value_of(r(), n("partition_window"), {{"topic", "t"}}), 5);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), {{"topic", "t"}}), 3);
  EXPECT_EQ(value_of(r(), n("window_resets_total"), {{"topic", "t"}}), 1);

  // ...until it learns 20 again.
  o_.on_window({"t", 1}, 20);
  EXPECT_EQ(value_of(r(), n("partition_window"), {{"topic", "t"}}), 20);
  o_.on_inflight_batches({"t", 0}, 0);
  EXPECT_EQ(value_of(r(), n("inflight_batches"), {{"topic", "t"}}), 0);
}

}  // namespace
}  // namespace pp
