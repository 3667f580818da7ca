// bench_rdkafka_producer: a closed-loop librdkafka producer that sends as
// fast as its local queue allows, for a bounded count and a bounded time,
// then reports throughput, delivery latency and its own CPU time as one
// JSON line. The same binary is the direct baseline (to the test cluster)
// and the application behind produce-proxy (--legacy 1 for Produce v1).
#include <cstdio>

#include "tests/bench/bench_common.h"
#include "tests/bench/rdkafka_setup.h"

using namespace pp::bench;

namespace {

constexpr const char* kUsage =
    "bench_rdkafka_producer --bootstrap H:P --topic T [--record-bytes 1024] [--count N]\n"
    "  [--duration-s S] [--flush-timeout-ms MS] [--seed N] + producer flags:\n";

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  const ProducerOptions options = read_producer_options(flags);
  const auto record_bytes = static_cast<std::size_t>(flags.num("record-bytes", 1024));
  const std::int64_t count = flags.num("count", 1'000'000);
  const double duration_s = flags.real("duration-s", 10);
  const int flush_timeout_ms = static_cast<int>(flags.num("flush-timeout-ms", 30000));
  const auto seed = static_cast<std::uint64_t>(flags.num("seed", 1));
  flags.finish(std::string(kUsage) + options.usage_line());

  Payloads payloads(record_bytes, seed);
  Delivery delivery;
  delivery.latencies.reserve(static_cast<std::size_t>(count));
  Producer producer = create_producer(options, &delivery);

  const double cpu_start = cpu_seconds();
  const std::int64_t start = now_ns();
  delivery.count_from_ns = start;
  const std::int64_t deadline = start + static_cast<std::int64_t>(duration_s * 1e9);
  std::int64_t sent = 0;
  // Both bounds hold: at most `count` records, and no new record after the
  // deadline (checked every 256 records, a few microseconds apart).
  while (sent < count) {
    if ((sent & 255) == 0) {
      if (now_ns() >= deadline) break;
      rd_kafka_poll(producer.rk, 0);
    }
    const int partition = static_cast<int>(sent % producer.partitions);
    produce_one(producer.rk, producer.topic, partition, payloads.record(static_cast<std::uint64_t>(sent)), record_bytes,
                now_ns());
    ++sent;
  }
  const std::int64_t produced_ns = now_ns();
  const int partitions = producer.partitions;
  const int unsent = close_producer(producer, flush_timeout_ms);
  const double cpu = cpu_seconds() - cpu_start;

  const std::int64_t end = delivery.last_ns > start ? delivery.last_ns : now_ns();
  const double seconds = static_cast<double>(end - start) / 1e9;
  const double bytes = static_cast<double>(delivery.bytes);
  JsonLine out;
  out.add("tool", std::string("rdkafka_producer"))
      .add("mode", std::string(options.legacy ? "legacy" : "default"))
      .add("sent", sent)
      .add("records", delivery.delivered)
      .add("failed", delivery.failed)
      .add("unsent", static_cast<std::int64_t>(unsent))
      .add("bytes", delivery.delivered * static_cast<std::int64_t>(record_bytes))
      .add("partitions", static_cast<std::int64_t>(partitions))
      .add("produce_seconds", static_cast<double>(produced_ns - start) / 1e9)
      .add("seconds", seconds)
      .add("records_per_s", static_cast<double>(delivery.delivered) / seconds)
      .add("mb_per_s", bytes / 1e6 / seconds)
      .add("p50_ms", delivery.latencies.percentile_ms(0.50))
      .add("p99_ms", delivery.latencies.percentile_ms(0.99))
      .add("p999_ms", delivery.latencies.percentile_ms(0.999))
      .add("cpu_s", cpu)
      .add("cpu_s_per_gb", bytes > 0 ? cpu / (bytes / 1e9) : -1.0);
  if (!delivery.first_error.empty()) out.add("first_error", delivery.first_error);
  std::printf("%s\n", out.str().c_str());
  return 0;
}
