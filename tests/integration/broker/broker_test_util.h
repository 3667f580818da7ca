// Helpers for the test cluster's own tests: building idempotent batches and
// Produce requests, and calling the handlers directly (no sockets).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "proxy/protocol/messages/produce.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/broker/cluster_state.h"
#include "tests/broker/handlers.h"

namespace pp::test_broker::testing {

struct BatchSpec {
  std::int64_t producer_id = 1000;
  std::int16_t epoch = 0;
  std::int32_t sequence = 0;
  int records = 1;
  std::string value_prefix = "v";
  std::int64_t timestamp = 1'700'000'000'000;
  CompressionCodec compression = CompressionCodec::kNone;
};

// One v2 batch; record i has key "k<i>" and value "<prefix><sequence + i>".
inline Bytes make_batch(const BatchSpec& s) {
  RecordBatchBuildOptions o;
  o.producer_id = s.producer_id;
  o.producer_epoch = s.epoch;
  o.base_sequence = s.sequence;
  o.compression = s.compression;
  RecordBatchBuilder builder(o);
  for (int i = 0; i < s.records; ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::string value = s.value_prefix + std::to_string(std::int64_t{s.sequence} + i);
    builder.append(s.timestamp + i, as_bytes(key), as_bytes(value));
  }
  return builder.build();
}

inline ProduceRequest produce_request(const std::string& topic, std::int32_t partition, const Bytes& records,
                                      std::int16_t acks = -1, Uuid topic_id = {}) {
  ProduceRequest req;
  req.acks = acks;
  req.timeout_ms = 30000;
  req.transactional_id = std::nullopt;
  ProduceTopicData td;
  td.name = topic;
  td.topic_id = topic_id;
  td.partition_data.push_back(ProducePartitionData{partition, RecordsView{ByteView(records)}, {}});
  req.topic_data.push_back(std::move(td));
  return req;
}

// Sends one batch to `broker` as a Produce of `version`; the watchdog tokens
// are released at once (the response is "written").
inline ProducePartitionResponse produce(ClusterState& cluster, BrokerId broker, const std::string& topic,
                                        std::int32_t partition, const Bytes& batch, std::int16_t version = 9) {
  Topic* t = cluster.topic(topic);
  ProduceRequest req = produce_request(topic, partition, batch, -1, t ? t->id : Uuid{});
  ProduceResult result = handle_produce(cluster, broker, req, version);
  release(result.held);
  EXPECT_EQ(result.response.responses.size(), 1u);
  EXPECT_EQ(result.response.responses.at(0).partition_responses.size(), 1u);
  return result.response.responses.at(0).partition_responses.at(0);
}

inline Partition& partition_of(ClusterState& cluster, const std::string& topic, std::int32_t p) {
  Partition* found = cluster.partition(topic, p);
  EXPECT_NE(found, nullptr);
  return *found;
}

}  // namespace pp::test_broker::testing
