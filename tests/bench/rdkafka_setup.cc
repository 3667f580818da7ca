#include "tests/bench/rdkafka_setup.h"

#include <cstdio>
#include <cstdlib>

namespace pp::bench {
namespace {

void set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "librdkafka refuses %s=%s: %s\n", key, value.c_str(), err);
    std::exit(1);
  }
}

// Runs on the thread that calls rd_kafka_poll/flush (the tool's only
// thread), so Delivery needs no lock.
void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Delivery*>(opaque);
  const std::int64_t now = now_ns();
  const auto stamp = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(m->_private));
  d->last_ns = now;
  if (m->err) {
    ++d->failed;
    if (d->first_error.empty()) d->first_error = rd_kafka_err2str(m->err);
    return;
  }
  ++d->delivered;
  d->bytes += static_cast<std::int64_t>(m->len);
  if (stamp >= d->count_from_ns) d->latencies.add((now - stamp) / 1000);
}

}  // namespace

std::string ProducerOptions::usage_line() const {
  return "  --bootstrap H:P,... --topic T [--acks all|1|0] [--linger-ms N] [--compression C]\n"
         "  [--idempotence 0|1] [--legacy 0|1] [--fallback 0.9.0.1] [--max-in-flight N] [--batch-bytes N]\n"
         "  [--rdkafka k=v,k=v]\n";
}

ProducerOptions read_producer_options(Flags& flags) {
  ProducerOptions o;
  o.bootstrap = flags.str("bootstrap", "");
  o.topic = flags.str("topic", "");
  o.acks = flags.str("acks", o.acks);
  o.linger_ms = flags.num("linger-ms", o.linger_ms);
  o.compression = flags.str("compression", o.compression);
  o.idempotence = flags.num("idempotence", 0) != 0;
  o.legacy = flags.num("legacy", 0) != 0;
  o.fallback = flags.str("fallback", o.fallback);
  o.max_in_flight = flags.num("max-in-flight", 0);
  o.batch_bytes = flags.num("batch-bytes", 0);
  o.extra = flags.str("rdkafka", "");
  if (o.bootstrap.empty() || o.topic.empty()) {
    std::fprintf(stderr, "--bootstrap and --topic are required\n%s", o.usage_line().c_str());
    std::exit(2);
  }
  return o;
}

Producer create_producer(const ProducerOptions& o, Delivery* delivery) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", o.bootstrap);
  set(conf, "acks", o.acks);
  set(conf, "linger.ms", std::to_string(o.linger_ms));
  set(conf, "compression.codec", o.compression);
  set(conf, "enable.idempotence", o.idempotence ? "true" : "false");
  if (o.legacy) {
    set(conf, "api.version.request", "false");
    set(conf, "broker.version.fallback", o.fallback);
  }
  if (o.max_in_flight > 0) set(conf, "max.in.flight.requests.per.connection", std::to_string(o.max_in_flight));
  if (o.batch_bytes > 0) set(conf, "batch.size", std::to_string(o.batch_bytes));
  for (std::size_t start = 0; start < o.extra.size();) {
    std::size_t end = o.extra.find(',', start);
    if (end == std::string::npos) end = o.extra.size();
    const std::string item = o.extra.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "--rdkafka: expected k=v, got '%s'\n", item.c_str());
      std::exit(2);
    }
    set(conf, item.substr(0, eq).c_str(), item.substr(eq + 1));
    start = end + 1;
  }
  // Quiet unless something is wrong: the tools' stdout is parsed.
  set(conf, "log_level", "4");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, delivery);

  char err[512];
  Producer p;
  p.rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!p.rk) {
    std::fprintf(stderr, "rd_kafka_new: %s\n", err);
    std::exit(1);
  }
  p.topic = rd_kafka_topic_new(p.rk, o.topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  // Bounded: a few tries of a few seconds, as a cluster just started may
  // not have answered yet.
  for (int attempt = 0; attempt < 5 && p.partitions == 0; ++attempt) {
    if (rd_kafka_metadata(p.rk, 0, p.topic, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        p.partitions = md->topics[0].partition_cnt;
      }
      rd_kafka_metadata_destroy(md);
    }
  }
  if (p.partitions == 0) {
    std::fprintf(stderr, "no metadata for topic %s from %s\n", o.topic.c_str(), o.bootstrap.c_str());
    std::exit(1);
  }
  return p;
}

void produce_one(rd_kafka_t* rk, rd_kafka_topic_t* topic, int partition, const std::uint8_t* value, std::size_t size,
                 std::int64_t stamp_ns) {
  void* opaque = reinterpret_cast<void*>(static_cast<std::intptr_t>(stamp_ns));
  // Bounded: librdkafka's queue frees as deliveries come; a producer stuck
  // for a minute means the run is broken, and the tool says so.
  for (int tries = 0; tries < 60000; ++tries) {
    if (rd_kafka_produce(topic, partition, RD_KAFKA_MSG_F_COPY, const_cast<std::uint8_t*>(value), size, nullptr, 0,
                         opaque) == 0) {
      return;
    }
    if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      std::fprintf(stderr, "produce: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
      std::exit(1);
    }
    rd_kafka_poll(rk, 1);
  }
  std::fprintf(stderr, "produce: local queue full for a minute\n");
  std::exit(1);
}

int close_producer(Producer& p, int timeout_ms) {
  rd_kafka_flush(p.rk, timeout_ms);
  const int left = rd_kafka_outq_len(p.rk);
  // Records still queued (a stalled upstream) are dropped, so destroy does
  // not wait out message.timeout.ms.
  if (left > 0) rd_kafka_purge(p.rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_topic_destroy(p.topic);
  rd_kafka_destroy(p.rk);
  p = Producer{};
  return left;
}

}  // namespace pp::bench
