// bench_spool: the spool writer's acknowledgement latency and throughput on
// this machine's disk (docs/BENCHMARKS.md, "Spool"). N connections each keep
// one append in flight (a records entry of one client request: `records`
// records of `record_bytes` each) and append the next as soon as the last is
// durable, for `seconds`; every durable append is then resolved, as the
// pipeline would after the upstream's acknowledgement, so segments are
// deleted as they go. Reports, never asserts.
//
//   bench_spool [--dir DIR] [--connections N] [--records N] [--record-bytes B]
//               [--seconds S] [--fsync group|always] [--interval-ms MS]
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "proxy/records/record_batch_builder.h"
#include "proxy/spool/spool_recovery.h"
#include "proxy/spool/spool_writer.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string dir = ".";
  int connections = 16;
  int records = 1;
  std::size_t record_bytes = 1024;
  double seconds = 5;
  pp::spool::FsyncPolicy fsync = pp::spool::FsyncPolicy::kGroup;
  std::uint64_t interval_ms = 2;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--dir") o.dir = v;
    if (k == "--connections") o.connections = std::atoi(v);
    if (k == "--records") o.records = std::atoi(v);
    if (k == "--record-bytes") o.record_bytes = static_cast<std::size_t>(std::atol(v));
    if (k == "--seconds") o.seconds = std::atof(v);
    if (k == "--fsync")
      o.fsync = std::strcmp(v, "always") == 0 ? pp::spool::FsyncPolicy::kAlways : pp::spool::FsyncPolicy::kGroup;
    if (k == "--interval-ms") o.interval_ms = static_cast<std::uint64_t>(std::atol(v));
  }
  return o;
}

struct Counter : pp::spool::SpoolObserver {
  void on_fsync(double seconds, std::size_t appends) override {
    ++commits;
    appends_committed += appends;
    sync_seconds.push_back(seconds);
  }
  std::size_t commits = 0;
  std::size_t appends_committed = 0;
  std::vector<double> sync_seconds;
};

struct Run {
  Options o;
  pp::spool::SpoolWriter* writer = nullptr;
  pp::Bytes batch;
  pp::spool::RecordsEntry entry;
  Clock::time_point end;
  std::vector<double> latencies_ms;
  std::size_t failed = 0;
  int active = 0;

  void next(int connection) {
    if (Clock::now() >= end) {
      --active;
      return;
    }
    const auto start = Clock::now();
    auto queued = writer->append(entry, [this, connection, start](int status, pp::spool::EntryId id) {
      if (status != 0) {
        ++failed;
      } else {
        latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        // Acknowledged upstream at once: keeps the spool from growing.
        (void)writer->append(pp::spool::ResolvedEntry{id, pp::spool::Outcome::kFailed, 0, -1},
                             [](int, pp::spool::EntryId) {});
      }
      next(connection);
    });
    if (!queued) {
      ++failed;
      --active;
    }
  }
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::string pattern = o.dir + "/bench-spool-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = pattern;
  uv_loop_t loop;
  uv_loop_init(&loop);
  Counter counter;
  Run run;
  run.o = o;
  {
    auto recovered = pp::spool::SpoolRecovery(dir, pp::spool::SpoolRecovery::Mode::kRepair).run();
    if (!recovered) {
      std::fprintf(stderr, "%s\n", recovered.error().c_str());
      return 1;
    }
    pp::spool::SpoolWriterConfig config;
    config.max_bytes = std::size_t{8} << 30;
    config.fsync = o.fsync;
    config.fsync_interval_ms = o.interval_ms;
    pp::spool::SpoolWriter writer(&loop, config, std::move(*recovered), &counter);
    pp::RecordBatchBuilder builder(pp::RecordBatchBuildOptions{});
    const pp::Bytes value(o.record_bytes, 'x');
    for (int i = 0; i < o.records; ++i) builder.append(1700000000000 + i, std::nullopt, pp::ByteView(value));
    run.batch = builder.build();
    run.entry.topic = "bench";
    run.entry.record_count = o.records;
    run.entry.batch = run.batch;
    run.writer = &writer;
    const auto start = Clock::now();
    run.end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
    run.active = o.connections;
    for (int c = 0; c < o.connections; ++c) run.next(c);
    while (run.active > 0) uv_run(&loop, UV_RUN_ONCE);
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    bool closed = false;
    writer.close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    const double appends = static_cast<double>(run.latencies_ms.size());
    const double mib = appends * static_cast<double>(run.batch.size()) / (1 << 20);
    std::printf(
        "fsync=%s interval_ms=%llu connections=%d records/append=%d record_bytes=%zu: %.0f appends/s, %.0f "
        "records/s, %.1f MiB/s; ack latency p50 %.2f ms p99 %.2f ms max %.2f ms; %zu commits, %.1f entries/commit, "
        "write+fdatasync p50 %.2f ms p99 %.2f ms; %zu failed\n",
        o.fsync == pp::spool::FsyncPolicy::kAlways ? "always" : "group", static_cast<unsigned long long>(o.interval_ms),
        o.connections, o.records, o.record_bytes, appends / elapsed, appends * o.records / elapsed, mib / elapsed,
        percentile(run.latencies_ms, 0.5), percentile(run.latencies_ms, 0.99), percentile(run.latencies_ms, 1.0),
        counter.commits, counter.commits == 0 ? 0.0 : static_cast<double>(counter.appends_committed) / counter.commits,
        percentile(counter.sync_seconds, 0.5) * 1000, percentile(counter.sync_seconds, 0.99) * 1000, run.failed);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
