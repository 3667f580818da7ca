// The librdkafka producer both rdkafka load generators configure the same
// way, so a direct run and a through-the-proxy run differ only in the flags
// the benchmark script passes.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>

#include "tests/bench/bench_common.h"

namespace pp::bench {

struct ProducerOptions {
  std::string bootstrap;
  std::string topic;
  std::string acks = "all";  // all | 1 | 0
  std::int64_t linger_ms = 5;
  std::string compression = "none";  // none | gzip | snappy | lz4 | zstd
  bool idempotence = false;
  // Legacy mode (TOOLS.md): api.version.request=false with a 0.9 fallback
  // makes librdkafka 2.0.2 send Produce v1 with magic-0 message sets.
  bool legacy = false;
  std::string fallback = "0.9.0.1";
  std::int64_t max_in_flight = 0;  // 0: librdkafka's default (5 with idempotence)
  std::int64_t batch_bytes = 0;    // 0: librdkafka's default batch.size
  std::string extra;               // more librdkafka properties: "k=v,k=v"
  std::string usage_line() const;
};

// Reads the options above from flags (--bootstrap, --topic, --acks,
// --linger-ms, --compression, --idempotence 0|1, --legacy 0|1, --fallback,
// --max-in-flight, --batch-bytes, --rdkafka "k=v,k=v").
ProducerOptions read_producer_options(Flags& flags);

// Delivery outcomes, filled by the delivery-report callback. The callback
// gets `Delivery*` as the producer's opaque; each message's opaque is the
// monotonic nanosecond its latency counts from.
struct Delivery {
  Latencies latencies;
  std::int64_t delivered = 0;
  std::int64_t failed = 0;
  std::int64_t bytes = 0;
  std::int64_t last_ns = 0;
  std::int64_t count_from_ns = 0;  // samples of messages stamped earlier are not kept
  std::string first_error;
};

struct Producer {
  rd_kafka_t* rk = nullptr;
  rd_kafka_topic_t* topic = nullptr;
  int partitions = 0;
};

// Creates the producer (exits 1 on a configuration librdkafka refuses, or
// when the topic's metadata does not come within 10 s).
Producer create_producer(const ProducerOptions& o, Delivery* delivery);
// Flushes for at most `timeout_ms`, then destroys; returns records left unsent.
int close_producer(Producer& p, int timeout_ms);

// Enqueues one record to `partition`, serving delivery reports while the
// local queue is full. `stamp_ns` travels as the message opaque.
void produce_one(rd_kafka_t* rk, rd_kafka_topic_t* topic, int partition, const std::uint8_t* value, std::size_t size,
                 std::int64_t stamp_ns);

}  // namespace pp::bench
