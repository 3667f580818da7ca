#include "daemon/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <sstream>
#include <stdexcept>

namespace pp {

MockCluster::MockCluster(int brokers) : brokers_(brokers) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The host handle only does book-keeping for the mock: no
  // bootstrap.servers, so it never connects anywhere itself, and quiet.
  const char* settings[][2] = {{"client.id", "pp-mock-host"}, {"log_level", "3"}};
  for (const auto& kv : settings) {
    if (rd_kafka_conf_set(conf, kv[0], kv[1], errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("mock cluster config: ") + errstr);
    }
  }
  handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!handle_) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("rd_kafka_new: ") + errstr);
  }
  cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
  if (!cluster_) {
    rd_kafka_destroy(handle_);
    throw std::runtime_error("rd_kafka_mock_cluster_new failed");
  }
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

std::string MockCluster::bootstraps() const {
  return rd_kafka_mock_cluster_bootstraps(cluster_);
}

std::vector<std::string> MockCluster::bootstrap_list() const {
  std::vector<std::string> out;
  std::stringstream in(bootstraps());
  std::string entry;
  while (std::getline(in, entry, ',')) {
    if (!entry.empty()) out.push_back(entry);
  }
  return out;
}

bool MockCluster::create_topic(const std::string& topic, int partitions, int replication_factor) {
  return rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, replication_factor) ==
         RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool MockCluster::set_leader(const std::string& topic, std::int32_t partition, std::int32_t broker) {
  return rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

void MockCluster::push_request_errors(std::int16_t api_key, const std::vector<std::int16_t>& errors) {
  std::vector<rd_kafka_resp_err_t> codes;
  codes.reserve(errors.size());
  for (std::int16_t e : errors) codes.push_back(static_cast<rd_kafka_resp_err_t>(e));
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, codes.size(), codes.data());
}

bool MockCluster::set_rtt(std::int32_t broker, int rtt_ms) {
  return rd_kafka_mock_broker_set_rtt(cluster_, broker, rtt_ms) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool MockCluster::set_down(std::int32_t broker) {
  return rd_kafka_mock_broker_set_down(cluster_, broker) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool MockCluster::set_up(std::int32_t broker) {
  return rd_kafka_mock_broker_set_up(cluster_, broker) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool MockCluster::set_api_version(std::int16_t api_key, std::int16_t min_version, std::int16_t max_version) {
  return rd_kafka_mock_set_apiversion(cluster_, api_key, min_version, max_version) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

}  // namespace pp
