// bench_open_loop: an open-loop librdkafka producer for the latency
// workload (issue 8, workload 4). Record i is due at start + i/rate whatever
// happened to earlier records, and its latency counts from that due time,
// not from when the call was made: a stall anywhere shows up in the
// percentiles instead of silently slowing the sender (coordinated omission).
// Latency is "handed to the client library" to "acknowledged with acks=all".
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "tests/bench/bench_common.h"
#include "tests/bench/rdkafka_setup.h"

using namespace pp::bench;

namespace {

constexpr const char* kUsage =
    "bench_open_loop --bootstrap H:P --topic T --rate RECORDS_PER_S [--duration-s S] [--count N]\n"
    "  [--warmup-s S] [--record-bytes 1024] [--flush-timeout-ms MS] + producer flags:\n";

void sleep_ns(std::int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  const ProducerOptions options = read_producer_options(flags);
  const double rate = flags.real("rate", 0);
  const double duration_s = flags.real("duration-s", 10);
  const std::int64_t count = flags.num("count", 5'000'000);
  const double warmup_s = flags.real("warmup-s", 1);
  const auto record_bytes = static_cast<std::size_t>(flags.num("record-bytes", 1024));
  const int flush_timeout_ms = static_cast<int>(flags.num("flush-timeout-ms", 30000));
  flags.finish(std::string(kUsage) + options.usage_line());
  if (rate <= 0) {
    std::fprintf(stderr, "--rate must be positive\n");
    return 2;
  }

  Payloads payloads(record_bytes, 7);
  Delivery delivery;
  const auto planned = static_cast<std::size_t>(std::min<double>(static_cast<double>(count), rate * duration_s));
  delivery.latencies.reserve(planned + 1);
  Producer producer = create_producer(options, &delivery);

  const double cpu_start = cpu_seconds();
  const std::int64_t start = now_ns() + 10'000'000;  // a clean first tick
  const std::int64_t deadline = start + static_cast<std::int64_t>(duration_s * 1e9);
  delivery.count_from_ns = start + static_cast<std::int64_t>(warmup_s * 1e9);
  const double interval_ns = 1e9 / rate;
  std::int64_t sent = 0;
  std::int64_t max_behind_ns = 0;
  while (sent < count) {
    const std::int64_t due = start + static_cast<std::int64_t>(static_cast<double>(sent) * interval_ns);
    if (due >= deadline) break;
    const std::int64_t now = now_ns();
    if (now < due) {
      // Deliveries are served while waiting; sleep in short steps so a due
      // record is never more than ~100 us late because of us.
      rd_kafka_poll(producer.rk, 0);
      const std::int64_t wait = due - now_ns();
      if (wait > 0) sleep_ns(std::min<std::int64_t>(wait, 100'000));
      continue;
    }
    max_behind_ns = std::max(max_behind_ns, now - due);
    const int partition = static_cast<int>(sent % producer.partitions);
    produce_one(producer.rk, producer.topic, partition, payloads.record(static_cast<std::uint64_t>(sent)), record_bytes,
                due);
    ++sent;
    if ((sent & 63) == 0) rd_kafka_poll(producer.rk, 0);
  }
  const int partitions = producer.partitions;
  const int unsent = close_producer(producer, flush_timeout_ms);
  const double cpu = cpu_seconds() - cpu_start;
  const double seconds = static_cast<double>(deadline - start) / 1e9;

  JsonLine out;
  out.add("tool", std::string("open_loop"))
      .add("target_rate", rate)
      .add("sent", sent)
      .add("records", delivery.delivered)
      .add("failed", delivery.failed)
      .add("unsent", static_cast<std::int64_t>(unsent))
      .add("partitions", static_cast<std::int64_t>(partitions))
      .add("records_per_s", static_cast<double>(delivery.delivered) / seconds)
      .add("samples", static_cast<std::int64_t>(delivery.latencies.count()))
      .add("p50_ms", delivery.latencies.percentile_ms(0.50))
      .add("p99_ms", delivery.latencies.percentile_ms(0.99))
      .add("p999_ms", delivery.latencies.percentile_ms(0.999))
      .add("max_ms", delivery.latencies.percentile_ms(1.0))
      .add("max_send_behind_ms", static_cast<double>(max_behind_ns) / 1e6)
      .add("cpu_s", cpu);
  if (!delivery.first_error.empty()) out.add("first_error", delivery.first_error);
  std::printf("%s\n", out.str().c_str());
  return 0;
}
