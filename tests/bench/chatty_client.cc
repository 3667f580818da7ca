// bench_chatty_client: many connections of an old, chatty client. Each
// connection sends one record per Produce request and waits for the answer
// before sending the next (workload 3 of issue 8): Produce v2 with a magic-1
// one-message set, as a 0.10 client does, through produce-proxy; Produce v3
// with a one-record batch straight to the test cluster as the direct
// baseline. One thread, poll(2) over all sockets.
//
// --idle-connections N instead opens N connections (each does one
// ApiVersions round trip, as any client's first request) and holds them
// open for --hold-s seconds: the proxy's memory with idle clients (workload 5).
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#include "tests/bench/bench_common.h"
#include "tests/bench/kafka_wire.h"

using namespace pp::bench;
using pp::Bytes;
using pp::ByteView;

namespace {

constexpr const char* kUsage =
    "bench_chatty_client --bootstrap H:P --topic T [--connections 64] [--version 2|3] [--acks 1]\n"
    "  [--record-bytes 1024] [--count N] [--duration-s S] [--drain-timeout-s S]\n"
    "bench_chatty_client --bootstrap H:P --idle-connections N [--hold-s S]\n";

struct Connection {
  int fd = -1;
  std::int32_t partition = 0;
  FrameAssembler in;
  std::int64_t sent_ns = 0;
  std::int32_t correlation_id = 0;
  bool waiting = false;
};

int hold_idle(const std::string& bootstrap, std::int64_t n, double hold_s) {
  const HostPort server = parse_bootstrap(bootstrap).front();
  std::vector<int> fds;
  for (std::int64_t i = 0; i < n; ++i) {
    const int fd = connect_to(server);
    if (fd < 0) break;
    fds.push_back(fd);
    if (!write_all(fd, api_versions_request(static_cast<std::int32_t>(i))) || !read_frame_blocking(fd)) break;
  }
  std::fprintf(stderr, "idle: %zu connections open, holding %.1f s\n", fds.size(), hold_s);
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<std::int64_t>(hold_s * 1000)));
  for (int fd : fds) close(fd);
  std::printf("%s\n", JsonLine()
                          .add("tool", std::string("chatty_idle"))
                          .add("connections", static_cast<std::int64_t>(fds.size()))
                          .str()
                          .c_str());
  return fds.size() == static_cast<std::size_t>(n) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  const std::string bootstrap = flags.str("bootstrap", "");
  const std::int64_t idle = flags.num("idle-connections", 0);
  const double hold_s = flags.real("hold-s", 5);
  const std::string topic = flags.str("topic", "");
  const auto connections = static_cast<std::size_t>(flags.num("connections", 64));
  const auto version = static_cast<std::int16_t>(flags.num("version", 2));
  const auto acks = static_cast<std::int16_t>(flags.num("acks", 1));
  const auto record_bytes = static_cast<std::size_t>(flags.num("record-bytes", 1024));
  const std::int64_t count = flags.num("count", 1'000'000);
  const double duration_s = flags.real("duration-s", 10);
  const double drain_timeout_s = flags.real("drain-timeout-s", 10);
  flags.finish(kUsage);
  if (bootstrap.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  if (idle > 0) return hold_idle(bootstrap, idle, hold_s);
  if (topic.empty() || acks == 0 || version < 0 || version > 8) {
    std::fprintf(stderr, "--topic is required; acks must not be 0 (we wait for answers)\n%s", kUsage);
    return 2;
  }

  const auto leaders = partition_leaders(bootstrap, topic);
  if (leaders.empty()) return 1;
  std::vector<std::int32_t> partition_ids;
  for (const auto& [p, leader] : leaders) partition_ids.push_back(p);

  Payloads payloads(record_bytes, 3);
  Latencies latencies;
  latencies.reserve(static_cast<std::size_t>(count));
  std::vector<Connection> conns(connections);
  std::vector<pollfd> pfds(connections);
  for (std::size_t i = 0; i < connections; ++i) {
    conns[i].partition = partition_ids[i % partition_ids.size()];
    conns[i].fd = connect_to(leaders.at(conns[i].partition));
    if (conns[i].fd < 0) return 1;
    pfds[i] = pollfd{conns[i].fd, POLLIN, 0};
  }

  const double cpu_start = cpu_seconds();
  const std::int64_t start = now_ns();
  const std::int64_t deadline = start + static_cast<std::int64_t>(duration_s * 1e9);
  const std::int64_t give_up = deadline + static_cast<std::int64_t>(drain_timeout_s * 1e9);
  std::int64_t sent = 0, answered = 0, errors = 0, broken = 0, last_ns = start;
  std::int32_t next_correlation = 1;

  auto send_next = [&](Connection& c) {
    if (sent >= count || now_ns() >= deadline) return;
    c.correlation_id = next_correlation++;
    const Bytes frame = produce_request(version, c.correlation_id, topic, c.partition, acks,
                                        ByteView(payloads.record(static_cast<std::uint64_t>(sent)), record_bytes));
    c.sent_ns = now_ns();
    if (!write_all(c.fd, frame)) {
      ++broken;
      return;
    }
    c.waiting = true;
    ++sent;
  };
  for (auto& c : conns) send_next(c);

  for (;;) {
    const auto outstanding = std::count_if(conns.begin(), conns.end(), [](const Connection& c) { return c.waiting; });
    if (outstanding == 0 || now_ns() >= give_up) break;
    if (poll(pfds.data(), pfds.size(), 100) < 0) continue;
    for (std::size_t i = 0; i < connections; ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Connection& c = conns[i];
      if (!c.in.read_some(c.fd)) {
        if (c.waiting) ++broken;
        c.waiting = false;
        pfds[i].fd = -1;  // poll ignores it from now on
        continue;
      }
      while (auto frame = c.in.pop()) {
        std::int32_t correlation = -1;
        const int error = produce_response_error(ByteView(*frame), version, &correlation);
        if (!c.waiting || correlation != c.correlation_id) continue;  // not ours: ignore
        const std::int64_t now = now_ns();
        c.waiting = false;
        last_ns = now;
        if (error == 0) {
          ++answered;
          latencies.add((now - c.sent_ns) / 1000);
        } else {
          ++errors;
        }
        send_next(c);
      }
    }
  }
  const double cpu = cpu_seconds() - cpu_start;
  for (auto& c : conns) close(c.fd);

  const double seconds = static_cast<double>(last_ns - start) / 1e9;
  std::printf("%s\n", JsonLine()
                          .add("tool", std::string("chatty"))
                          .add("produce_version", static_cast<std::int64_t>(version))
                          .add("connections", static_cast<std::int64_t>(connections))
                          .add("partitions", static_cast<std::int64_t>(partition_ids.size()))
                          .add("sent", sent)
                          .add("records", answered)
                          .add("errors", errors)
                          .add("broken", broken)
                          .add("seconds", seconds)
                          .add("records_per_s", static_cast<double>(answered) / seconds)
                          .add("p50_ms", latencies.percentile_ms(0.50))
                          .add("p99_ms", latencies.percentile_ms(0.99))
                          .add("p999_ms", latencies.percentile_ms(0.999))
                          .add("cpu_s", cpu)
                          .str()
                          .c_str());
  return 0;
}
