// The same pipeline against librdkafka's mock cluster: an independent broker
// that speaks only old versions (Produce <= v7, Metadata <= v2: no leader
// epochs, no KIP-1269 field). Versions negotiate down, the window stays 5,
// moved leaders are followed, and every record lands once. The mock doesn't
// deduplicate idempotent producers, so no duplicate-making faults here.
#include <librdkafka/rdkafka.h>

#include <chrono>

#include "daemon/mock_cluster.h"
#include "tests/integration/pipeline/driver_fixture.h"

namespace pp::testing {
namespace {

// Reads every partition of `topic` back with a plain librdkafka consumer.
std::map<std::int32_t, std::vector<std::string>> consume_all(const std::string& bootstrap, const std::string& topic,
                                                             int partitions, std::size_t expected_total) {
  std::map<std::int32_t, std::vector<std::string>> out;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "pipeline-readback", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::size_t total = 0;
  int eofs = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((total < expected_total || eofs < partitions) && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 10);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ++eofs;
    } else if (!m->err) {
      out[m->partition].emplace_back(static_cast<const char*>(m->payload), m->len);
      ++total;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

class MockClusterPipeline : public DriverFixture {};

TEST_F(MockClusterPipeline, NegotiatesDownKeepsFiveFollowsLeadersAndDeliversOnce) {
  MockCluster mock(3);
  constexpr int kPartitions = 6;
  ASSERT_TRUE(mock.create_topic("m", kPartitions));
  PipelineConfig pipeline;
  pipeline.linger_ms = 1;
  pipeline.batch_bytes = 8192;
  pipeline.retry_backoff_ms = 20;
  pipeline.retry_backoff_max_ms = 200;
  start_driver(mock.bootstraps(), pipeline, 50);

  constexpr int kRounds = 40;
  int round = 0;
  net::Timer feeder(&loop_);
  feeder.start(1, 10, [&] {
    if (round >= kRounds) return;
    for (int p = 0; p < kPartitions; ++p) submit("m", p, 20);
    // Move leaders twice during the run; the mock has no leader epochs, so the
    // pipeline must notice by leader id alone (after NOT_LEADER_OR_FOLLOWER).
    if (round == 10 || round == 25) {
      for (int p = 0; p < kPartitions; ++p) mock.set_leader("m", p, 1 + (p + round) % 3);
      driver_->upstream().request_metadata({"m"});
    }
    ++round;
  });
  ASSERT_TRUE(run_until([&] { return round >= kRounds && all_completed(); }, 60000)) << completed_ << "/" << submitted_;
  feeder.stop();
  EXPECT_EQ(failed_, 0) << last_error_;
  for (const auto& status : driver_->upstream().broker_status()) {
    if (status.produce_version >= 0) {
      EXPECT_LE(status.produce_version, 7) << "broker " << status.node_id;
    }
  }
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(driver_->producer().partition(TopicPartition{"m", p})->window(), 5);
  }
  const auto consumed =
      consume_all(mock.bootstraps(), "m", kPartitions, static_cast<std::size_t>(kRounds) * 20 * kPartitions);
  for (int p = 0; p < kPartitions; ++p) {
    const auto& want = expected_[std::make_pair(std::string("m"), p)];
    const auto it = consumed.find(p);
    ASSERT_NE(it, consumed.end()) << "partition " << p << " read nothing back";
    EXPECT_TRUE(it->second == want) << "partition " << p << ": " << it->second.size() << " read, " << want.size()
                                    << " produced";
  }
}

}  // namespace
}  // namespace pp::testing
