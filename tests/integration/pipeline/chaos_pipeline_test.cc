// Issue 4's chaos run: 500,000 records over 64 partitions while the test
// cluster cuts 5% of Produce responses after appending, flips every leader
// every 200 ms and restarts a broker. A fast run sends few, large requests,
// so the 5% alone may cut none: each broker also cuts its first Produce and
// its first after half the records were delivered, which is what makes the
// duplicate check certain. Checked with the cluster's inspection
// API and again by kcat consuming the log through Fetch.
#include <cstdio>

#include "tests/broker/test_cluster.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

using test_broker::TestCluster;
using test_broker::TestClusterOptions;

// Counts per partition what kcat reads back (value per line, "partition value").
std::map<std::int32_t, std::vector<std::string>> consume_with_kcat(const std::string& bootstrap,
                                                                   const std::string& topic) {
  std::map<std::int32_t, std::vector<std::string>> out;
  const std::string cmd =
      "timeout 120 kcat -C -q -b " + bootstrap + " -t " + topic + " -o beginning -e -f '%p %s\\n' 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string s(line);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    const auto space = s.find(' ');
    if (space == std::string::npos) continue;
    out[std::stoi(s.substr(0, space))].push_back(s.substr(space + 1));
  }
  pclose(pipe);
  return out;
}

class ChaosPipeline : public DriverFixture {};

TEST_F(ChaosPipeline, HalfAMillionRecordsExactlyOnceInOrderThroughFaults) {
  constexpr int kPartitions = 64;
  constexpr int kRecords = 500000;
  constexpr int kRunSize = 50;
  TestClusterOptions options;
  options.brokers = 3;
  options.topics = {{"chaos", kPartitions, 20}};
  // The broker generation and window placement the suite runs under
  // (PP_TEST_FIRST_SEQUENCE_RULE, PP_TEST_RETAIN_PLACEMENT; ctest variants).
  auto env = test_broker::apply_test_environment(options);
  ASSERT_TRUE(env.has_value()) << env.error();
  TestCluster cluster(options);
  cluster.start();
  PipelineConfig pipeline;
  pipeline.linger_ms = 2;
  pipeline.batch_bytes = 16384;
  pipeline.retry_backoff_ms = 20;
  pipeline.retry_backoff_max_ms = 200;
  pipeline.delivery_timeout_ms = 120000;
  start_driver(cluster.bootstrap(), pipeline, 50);
  ASSERT_TRUE(cluster.drop_responses(0.05, test_broker::DropMode::kCloseConnection).has_value());
  const auto cut_next_produce_everywhere = [&] {
    for (test_broker::BrokerId broker = 1; broker <= options.brokers; ++broker) {
      EXPECT_TRUE(cluster.disconnect_next_produce(broker, 1, /*after_append=*/true).has_value());
    }
  };
  cut_next_produce_everywhere();

  // Faults on a timer of this loop: flips every 200 ms, broker 2 down for a
  // second in the middle.
  int ticks = 0;
  net::Timer faults(&loop_);
  faults.start(200, 200, [&] {
    ++ticks;
    cluster.flip_leaders();
    if (ticks == 10) {
      EXPECT_TRUE(cluster.broker_down(2).has_value());
    }
    if (ticks == 15) {
      EXPECT_TRUE(cluster.broker_up(2).has_value());
    }
  });
  // Feed in slices so the producer's memory budget is respected.
  int next_partition = 0;
  int sent_records = 0;
  net::Timer feeder(&loop_);
  bool armed_mid_run_cuts = false;
  feeder.start(1, 5, [&] {
    if (!armed_mid_run_cuts && completed_ * kRunSize * 2 >= kRecords) {
      armed_mid_run_cuts = true;
      cut_next_produce_everywhere();
    }
    for (int i = 0; i < 200 && sent_records < kRecords; ++i) {
      if (driver_->producer().over_memory_budget()) break;
      submit("chaos", next_partition, kRunSize, 40);
      next_partition = (next_partition + 1) % kPartitions;
      sent_records += kRunSize;
    }
  });
  ASSERT_TRUE(run_until([&] { return sent_records >= kRecords && all_completed(); }, 240000))
      << completed_ << "/" << submitted_ << " runs";
  faults.stop();
  feeder.stop();
  EXPECT_EQ(failed_, 0) << last_error_;
  ASSERT_TRUE(cluster.drop_responses(0).has_value());

  const auto stats = cluster.stats();
  EXPECT_EQ(stats.total_records(), kRecords);
  EXPECT_GT(stats.total_duplicates(), 0) << "the cut responses never made a retry that dedup caught";
  EXPECT_EQ(stats.total_window_violations(), 0);
  std::printf("chaos: %lld records, %lld duplicates recognised by the brokers, max in flight %d\n",
              static_cast<long long>(stats.total_records()), static_cast<long long>(stats.total_duplicates()),
              stats.max_inflight());
  for (const auto& [key, values] : expected_) {
    const auto records = cluster.records(key.first, key.second);
    std::vector<std::string> logged;
    for (const auto& r : records) logged.emplace_back(r.value->begin(), r.value->end());
    ASSERT_TRUE(logged == values) << key.first << "-" << key.second << ": " << logged.size() << " logged, "
                                  << values.size() << " submitted";
  }

  // An independent reader: kcat through Fetch.
  const auto consumed = consume_with_kcat(cluster.bootstrap(), "chaos");
  std::size_t total = 0;
  for (const auto& [partition, values] : consumed) {
    total += values.size();
    const auto& want = expected_[std::make_pair(std::string("chaos"), partition)];
    EXPECT_TRUE(values == want) << "kcat: partition " << partition;
  }
  EXPECT_EQ(total, static_cast<std::size_t>(kRecords)) << "kcat read a different count";
}

}  // namespace
}  // namespace pp::testing
