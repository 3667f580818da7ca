// librdkafka's mock cluster (rdkafka_mock.h) as an RAII object, the daemon's
// embedded upstream (bootstrap_servers = ["embedded"]) and tests' second broker: an
// independent Kafka broker implementation on 127.0.0.1 ephemeral ports,
// served by librdkafka's own thread. librdkafka 2.0.2 speaks Produce v0-v7,
// Metadata v0-v2 (no leader epochs), ApiVersions v0-v2, InitProducerId v0-v4,
// and closes the connection on a version it doesn't speak (TOOLS.md).
//
//   MockCluster cluster(3);
//   cluster.create_topic("t", 6);
//   cluster.set_leader("t", 0, 2);
//   connect_to(cluster.bootstraps());
//
// Calls are thread-safe (librdkafka serialises them onto the mock's thread)
// but on an idle mock one can stall for about a second (a 2.0.2 wake-up
// quirk), so tests should not time them tightly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace pp {

class MockCluster {
 public:
  // Throws std::runtime_error if librdkafka can't create it (test set-up only).
  explicit MockCluster(int brokers = 3);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  int broker_count() const { return brokers_; }
  // "127.0.0.1:P1,127.0.0.1:P2,..." in broker id order (ids are 1..N).
  std::string bootstraps() const;
  std::vector<std::string> bootstrap_list() const;

  // Each returns false (and the test should fail) if the mock refused.
  bool create_topic(const std::string& topic, int partitions, int replication_factor = 1);
  bool set_leader(const std::string& topic, std::int32_t partition, std::int32_t broker);
  // The next errors.size() requests of `api_key`, cluster-wide, fail with
  // these Kafka error codes in order (-195, librdkafka's transport error,
  // makes the broker drop the connection instead).
  void push_request_errors(std::int16_t api_key, const std::vector<std::int16_t>& errors);
  // Delays every response of `broker` (-1: all brokers).
  bool set_rtt(std::int32_t broker, int rtt_ms);
  // Closes the broker's connections and refuses new ones; leaders don't move.
  bool set_down(std::int32_t broker);
  bool set_up(std::int32_t broker);
  bool set_api_version(std::int16_t api_key, std::int16_t min_version, std::int16_t max_version);

  rd_kafka_mock_cluster_s* raw() const { return cluster_; }

 private:
  int brokers_;
  rd_kafka_s* handle_ = nullptr;
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
};

}  // namespace pp
