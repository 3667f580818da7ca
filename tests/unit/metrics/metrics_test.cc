// The families of docs/design/INTERFACES.md exist with their types and labels, the front
// end's and sampler's methods move the right series, and the exposition passes
// promtool's lint.
#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>

#include "tests/unit/metrics/collected.h"

namespace pp {
namespace {

using testing::LabelMap;
using testing::value_of;

constexpr const char* kP = "produce_proxy_";
std::string n(const char* suffix) {
  return std::string(kP) + suffix;
}

// Feeds every family once, so the exposition shows each with samples.
void exercise_everything(Metrics& m) {
  PipelineObserver& o = m.pipeline_observer();
  const TopicPartition tp{"orders", 3};
  o.on_batch_sent(tp, 120, 40000, false);
  o.on_inflight_batches(tp, 4);
  o.on_window(tp, 20);
  o.on_leader_change(tp);
  o.on_window_reset(tp);
  o.on_retry(ErrorCode::kNotLeaderOrFollower);
  o.on_duplicate_sequence();
  o.on_epoch_bump("out_of_order_sequence");
  o.on_records_delivered(120);
  o.on_records_failed(ErrorCode::kRequestTimedOut, 7);
  o.on_produce_request(1);
  o.on_produce_response(1, 12);
  m.set_client_connections(3);
  m.on_client_request(ApiKey::kProduce, 2);
  m.on_client_request_done(-1, std::chrono::milliseconds(8));
  m.on_records_received(120, 40000);
  m.set_backpressure(true);
  m.on_client_produce("librdkafka", "2.0.2", 7, 2);
  const std::array<BrokerSample, 2> brokers{BrokerSample{1, 2, true}, BrokerSample{2, 0, false}};
  m.sample(4096, brokers);
  m.upstream_observer().on_auth_failure("127.0.0.1:9092", "sasl_authentication");
  m.on_upstream_reauthentication(1);
}

TEST(Metrics, EveryInterfaceFamilyHasItsTypeAndLabels) {
  Metrics m(MetricsConfig{});
  exercise_everything(m);
  const auto families = m.registry()->Collect();
  using T = prometheus::MetricType;
  struct Expect {
    const char* name;
    T type;
    std::vector<std::string> labels;
  };
  const std::vector<Expect> expected = {
      {"build_info", T::Gauge, {"version"}},
      {"client_connections", T::Gauge, {}},
      {"client_requests_total", T::Counter, {"api", "version"}},
      {"client_request_duration_seconds", T::Histogram, {"acks"}},
      {"records_received_total", T::Counter, {}},
      {"received_bytes_total", T::Counter, {}},
      {"records_delivered_total", T::Counter, {}},
      {"records_failed_total", T::Counter, {"error"}},
      {"buffered_bytes", T::Gauge, {}},
      {"topics_followed", T::Gauge, {}},
      {"backpressure_active", T::Gauge, {}},
      {"client_share_pauses_total", T::Counter, {}},
      {"requests_parked_total", T::Counter, {}},
      {"requests_refused_for_memory_total", T::Counter, {}},
      {"client_duplicates_total", T::Counter, {"outcome"}},
      {"client_deadline_answers_total", T::Counter, {"outcome"}},
      {"client_deadline_records_total", T::Counter, {"outcome"}},
      {"client_produce_requests_total", T::Counter, {"magic", "software", "software_version", "version"}},
      {"inflight_batches", T::Gauge, {"partition", "topic"}},
      {"inflight_requests", T::Gauge, {"broker"}},
      {"partition_window", T::Gauge, {"partition", "topic"}},
      {"window_resets_total", T::Counter, {"partition", "topic"}},
      {"retries_total", T::Counter, {"error"}},
      {"duplicate_sequence_total", T::Counter, {}},
      {"producer_epoch_bumps_total", T::Counter, {"reason"}},
      {"ambiguous_renumbered_total", T::Counter, {"reason"}},
      {"producer_identity_changes_total", T::Counter, {"state"}},
      {"leader_changes_total", T::Counter, {}},
      {"upstream_requests_total", T::Counter, {"broker"}},
      {"upstream_request_duration_seconds", T::Histogram, {}},
      {"batch_records", T::Histogram, {}},
      {"batch_bytes", T::Histogram, {}},
      {"upstream_connected", T::Gauge, {"broker"}},
      {"upstream_auth_failures_total", T::Counter, {"broker", "reason"}},
      {"upstream_reauthentications_total", T::Counter, {"broker"}},
      {"spool_bytes", T::Gauge, {}},
      {"spool_records", T::Gauge, {}},
      {"spool_oldest_record_age_seconds", T::Gauge, {}},
      {"spool_fsync_seconds", T::Histogram, {}},
      {"spool_replayed_batches_total", T::Counter, {}},
      {"spool_corrupt_bytes_total", T::Counter, {}},
  };
  EXPECT_EQ(families.size(), expected.size());
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const auto* f = testing::family_of(families, n(e.name));
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->type, e.type);
    EXPECT_FALSE(f->help.empty());
    ASSERT_FALSE(f->metric.empty());
    for (const auto& metric : f->metric) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : testing::labels_of(metric)) keys.push_back(k);
      EXPECT_EQ(keys, e.labels);
    }
  }
}

TEST(Metrics, UpstreamAuthenticationCountedByBrokerAndReason) {
  Metrics m(MetricsConfig{});
  m.upstream_observer().on_auth_failure("k2:9092", "sasl_authentication");
  m.upstream_observer().on_auth_failure("k2:9092", "sasl_authentication");
  m.upstream_observer().on_auth_failure("k1:9092", "sasl_mechanism");
  m.on_upstream_reauthentication(2);
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, n("upstream_auth_failures_total"), {{"broker", "k2:9092"}, {"reason", "sasl_authentication"}}),
            2);
  EXPECT_EQ(value_of(r, n("upstream_auth_failures_total"), {{"broker", "k1:9092"}, {"reason", "sasl_mechanism"}}), 1);
  EXPECT_EQ(value_of(r, n("upstream_reauthentications_total"), {{"broker", "2"}}), 1);
}

TEST(Metrics, BuildInfoIsOneWithTheVersion) {
  Metrics m(MetricsConfig{}, "1.2.3");
  EXPECT_EQ(value_of(*m.registry(), n("build_info"), {{"version", "1.2.3"}}), 1);
  Metrics d(MetricsConfig{});
  EXPECT_EQ(value_of(*d.registry(), n("build_info"), {{"version", std::string(build_version())}}), 1);
  EXPECT_NE(build_version(), "unknown");
}

TEST(Metrics, UnlabelledSeriesShowZeroBeforeAnything) {
  Metrics m(MetricsConfig{});
  for (const char* name :
       {"client_connections", "records_received_total", "received_bytes_total", "records_delivered_total",
        "buffered_bytes", "backpressure_active", "client_share_pauses_total", "requests_parked_total",
        "requests_refused_for_memory_total", "duplicate_sequence_total", "leader_changes_total"}) {
    EXPECT_EQ(value_of(*m.registry(), n(name)), 0) << name;
  }
  for (const char* acks : {"0", "1", "all"}) {
    EXPECT_EQ(value_of(*m.registry(), n("client_request_duration_seconds"), {{"acks", acks}}), 0) << acks;
  }
}

TEST(Metrics, ClientDuplicatesByOutcomeStartAtZero) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, n("client_duplicates_total"), {{"outcome", "acked"}}), 0);
  m.frontend_observer().on_client_duplicate("acked");
  m.frontend_observer().on_client_duplicate("in_flight");
  m.frontend_observer().on_client_duplicate("in_flight");
  EXPECT_EQ(value_of(r, n("client_duplicates_total"), {{"outcome", "acked"}}), 1);
  EXPECT_EQ(value_of(r, n("client_duplicates_total"), {{"outcome", "in_flight"}}), 2);
}

TEST(Metrics, DeadlineAnswersAndTheirRecordsByOutcomeStartAtZero) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  for (const char* outcome : {"withdrawn", "in_flight"}) {
    EXPECT_EQ(value_of(r, n("client_deadline_answers_total"), {{"outcome", outcome}}), 0) << outcome;
    EXPECT_EQ(value_of(r, n("client_deadline_records_total"), {{"outcome", outcome}}), 0) << outcome;
  }
  m.frontend_observer().on_deadline_answer(DeadlineOutcome::kWithdrawn, 3);
  m.frontend_observer().on_deadline_answer(DeadlineOutcome::kWithdrawn, 4);
  m.frontend_observer().on_deadline_answer(DeadlineOutcome::kInFlight, 10);
  EXPECT_EQ(value_of(r, n("client_deadline_answers_total"), {{"outcome", "withdrawn"}}), 2);
  EXPECT_EQ(value_of(r, n("client_deadline_records_total"), {{"outcome", "withdrawn"}}), 7);
  EXPECT_EQ(value_of(r, n("client_deadline_answers_total"), {{"outcome", "in_flight"}}), 1);
  EXPECT_EQ(value_of(r, n("client_deadline_records_total"), {{"outcome", "in_flight"}}), 10);
}

TEST(Metrics, ClientProduceRequestsBySoftwareVersionAndMagicAreBounded) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  m.frontend_observer().on_client_produce("kafka-python", "", 1, 0);
  m.frontend_observer().on_client_produce("kafka-python", "", 1, 0);
  m.frontend_observer().on_client_produce("apache-kafka-java", "4.4.0", 12, 2);
  m.frontend_observer().on_client_produce("kcat", "", 0, -1);
  const auto n_of = [&](std::string sw, std::string v, std::string version, std::string magic) {
    return value_of(r, n("client_produce_requests_total"),
                    {{"software", sw}, {"software_version", v}, {"version", version}, {"magic", magic}});
  };
  EXPECT_EQ(n_of("kafka-python", "", "1", "0"), 2);
  EXPECT_EQ(n_of("apache-kafka-java", "4.4.0", "12", "2"), 1);
  EXPECT_EQ(n_of("kcat", "", "0", "none"), 1);
  for (int i = 0; i < 200; ++i) m.on_client_produce("peer-" + std::to_string(i), "1", 9, 2);
  EXPECT_EQ(n_of("other", "", "9", "2"), 200 - (Metrics::kMaxClientSoftwareSeries - 3));
}

TEST(Metrics, FrontEndMethodsMoveTheirSeries) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  m.set_client_connections(5);
  m.set_client_connections(4);
  EXPECT_EQ(value_of(r, n("client_connections")), 4);

  m.on_client_request(ApiKey::kProduce, 2);
  m.on_client_request(ApiKey::kProduce, 2);
  m.on_client_request(ApiKey::kApiVersions, 0);
  EXPECT_EQ(value_of(r, n("client_requests_total"), {{"api", "Produce"}, {"version", "2"}}), 2);
  EXPECT_EQ(value_of(r, n("client_requests_total"), {{"api", "ApiVersions"}, {"version", "0"}}), 1);

  m.on_records_received(10, 1000);
  m.on_records_received(5, 24);
  EXPECT_EQ(value_of(r, n("records_received_total")), 15);
  EXPECT_EQ(value_of(r, n("received_bytes_total")), 1024);

  m.set_backpressure(true);
  EXPECT_EQ(value_of(r, n("backpressure_active")), 1);
  m.set_backpressure(false);
  EXPECT_EQ(value_of(r, n("backpressure_active")), 0);

  m.on_client_request_done(1, std::chrono::milliseconds(3));
  m.on_client_request_done(0, std::chrono::microseconds(200));
  m.on_client_request_done(-1, std::chrono::seconds(2));
  m.on_client_request_done(7, std::chrono::milliseconds(1));
  const auto families = r.Collect();
  const auto* all = testing::histogram_of(families, n("client_request_duration_seconds"), {{"acks", "all"}});
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->sample_count, 1u);
  EXPECT_DOUBLE_EQ(all->sample_sum, 2.0);
  const auto* zero = testing::histogram_of(families, n("client_request_duration_seconds"), {{"acks", "0"}});
  ASSERT_NE(zero, nullptr);
  EXPECT_NEAR(zero->sample_sum, 0.0002, 1e-9);
  EXPECT_EQ(value_of(r, n("client_request_duration_seconds"), {{"acks", "invalid"}}), 1);
}

TEST(Metrics, FrontendObserverForwardsToTheSameSeries) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  FrontendObserver& f = m.frontend_observer();
  f.on_client_connections(2);
  f.on_request(ApiKey::kMetadata, 1);
  f.on_records_received(3, 300);
  f.on_backpressure(true);
  f.on_produce_done(1, 1500);
  EXPECT_EQ(value_of(r, n("client_connections")), 2);
  EXPECT_EQ(value_of(r, n("client_requests_total"), {{"api", "Metadata"}, {"version", "1"}}), 1);
  EXPECT_EQ(value_of(r, n("records_received_total")), 3);
  EXPECT_EQ(value_of(r, n("received_bytes_total")), 300);
  EXPECT_EQ(value_of(r, n("backpressure_active")), 1);
  const auto families = r.Collect();
  const auto* one = testing::histogram_of(families, n("client_request_duration_seconds"), {{"acks", "1"}});
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->sample_count, 1u);
  EXPECT_DOUBLE_EQ(one->sample_sum, 1.5);
}

TEST(Metrics, PeerChosenApiVersionsCannotGrowTheSeries) {
  Metrics m(MetricsConfig{});
  for (std::int16_t v = 100; v < 200; ++v) m.on_client_request(ApiKey::kProduce, v);
  for (std::int16_t k = 1000; k < 1100; ++k) m.on_client_request(static_cast<ApiKey>(k), 0);
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, n("client_requests_total"), {{"api", "Produce"}, {"version", "unsupported"}}), 100);
  EXPECT_EQ(value_of(r, n("client_requests_total"), {{"api", "unknown"}, {"version", "unsupported"}}), 100);
  EXPECT_EQ(testing::series_of(r, n("client_requests_total")).size(), 2u);
}

TEST(Metrics, SampleSetsBrokerGaugesAndZeroesVanishedBrokers) {
  Metrics m(MetricsConfig{});
  const auto& r = *m.registry();
  const std::array<BrokerSample, 2> two{BrokerSample{1, 3, true}, BrokerSample{2, 1, true}};
  m.sample(1 << 20, two);
  EXPECT_EQ(value_of(r, n("buffered_bytes")), 1 << 20);
  EXPECT_EQ(value_of(r, n("inflight_requests"), {{"broker", "1"}}), 3);
  EXPECT_EQ(value_of(r, n("inflight_requests"), {{"broker", "2"}}), 1);
  EXPECT_EQ(value_of(r, n("upstream_connected"), {{"broker", "2"}}), 1);

  const std::array<BrokerSample, 1> one{BrokerSample{1, 0, false}};
  m.sample(0, one);
  EXPECT_EQ(value_of(r, n("buffered_bytes")), 0);
  EXPECT_EQ(value_of(r, n("upstream_connected"), {{"broker", "1"}}), 0);
  EXPECT_EQ(value_of(r, n("inflight_requests"), {{"broker", "2"}}), 0);
  EXPECT_EQ(value_of(r, n("upstream_connected"), {{"broker", "2"}}), 0);
}

TEST(Metrics, ExpositionPassesPromtool) {
  for (bool partition_labels : {true, false}) {
    SCOPED_TRACE(partition_labels ? "partition labels" : "per topic");
    Metrics m(MetricsConfig{.partition_labels = partition_labels});
    exercise_everything(m);
    // An error name with characters outside [A-Z_] must still be a valid label value.
    m.pipeline_observer().on_retry(static_cast<ErrorCode>(-7));
    const std::string text = m.exposition();
    EXPECT_NE(text.find("produce_proxy_partition_window{"), std::string::npos) << text;
    const auto check = testing::promtool_check_metrics(text);
    ASSERT_NE(check.exit_code, 127) << "promtool not found: scripts/setup.sh installs Debian's prometheus";
    EXPECT_EQ(check.exit_code, 0) << check.output << "\n--- exposition ---\n" << text;
    EXPECT_EQ(check.output, "");
  }
}

TEST(Metrics, EmptyRegistryAlsoPassesPromtool) {
  Metrics m(MetricsConfig{});
  const auto check = testing::promtool_check_metrics(m.exposition());
  EXPECT_EQ(check.exit_code, 0) << check.output << m.exposition();
}

}  // namespace
}  // namespace pp
