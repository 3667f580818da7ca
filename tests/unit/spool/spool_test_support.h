// Shared by the spool tests: real files in a fresh temporary directory, a real
// libuv loop, record batches built by the proxy's own builder, and an observer
// that counts what the writer reports.
#pragma once

#include <uv.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "proxy/records/record_batch_builder.h"
#include "proxy/spool/spool_observer.h"
#include "proxy/spool/spool_recovery.h"
#include "proxy/spool/spool_writer.h"

namespace pp::spool::testing {

// A directory under the system's temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pp-spool-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Bytes make_batch(int records, std::size_t value_bytes = 16, std::uint8_t fill = 'v') {
  RecordBatchBuilder builder(RecordBatchBuildOptions{});
  const Bytes value(value_bytes, fill);
  for (int i = 0; i < records; ++i) builder.append(1700000000000 + i, std::nullopt, ByteView(value));
  return builder.build();
}

inline RecordsEntry records_entry(const Bytes& batch, int records, std::string topic = "t",
                                  std::int32_t partition = 0) {
  RecordsEntry e;
  e.topic = std::move(topic);
  e.partition = partition;
  e.record_count = records;
  e.batch = batch;
  return e;
}

struct CountingObserver : SpoolObserver {
  void on_fsync(double /*seconds*/, std::size_t appends) override { fsyncs.push_back(appends); }
  void on_usage(std::size_t b, std::int64_t r, std::optional<std::int64_t> oldest) override {
    bytes = b;
    records = r;
    oldest_ms = oldest;
  }
  void on_corrupt_bytes(std::size_t n) override { corrupt += n; }
  std::vector<std::size_t> fsyncs;
  std::size_t bytes = 0;
  std::int64_t records = 0;
  std::optional<std::int64_t> oldest_ms;
  std::size_t corrupt = 0;
};

// A loop with a writer over a recovered directory; run() turns the loop until
// every callback asked for has run.
class WriterHarness {
 public:
  explicit WriterHarness(const std::string& dir, SpoolWriterConfig config = {}) {
    uv_loop_init(&loop_);
    auto recovered = SpoolRecovery(dir, SpoolRecovery::Mode::kRepair).run();
    if (recovered) writer_.emplace(&loop_, config, std::move(*recovered), &observer_);
  }
  ~WriterHarness() {
    close();
    writer_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }
  WriterHarness(const WriterHarness&) = delete;
  WriterHarness& operator=(const WriterHarness&) = delete;

  bool ok() const { return writer_.has_value(); }
  SpoolWriter& writer() { return *writer_; }
  CountingObserver& observer() { return observer_; }
  uv_loop_t* loop() { return &loop_; }

  // Appends and records the outcome; the status and id land in `results`.
  struct Result {
    bool refused = false;
    std::optional<int> status;
    EntryId id = kNoEntry;
  };
  std::size_t append(const EntryBody& body) {
    const std::size_t i = results_.size();
    results_.emplace_back();
    auto queued = writer_->append(body, [this, i](int status, EntryId id) {
      results_[i].status = status;
      results_[i].id = id;
    });
    if (!queued) results_[i].refused = true;
    return i;
  }
  const Result& result(std::size_t i) const { return results_[i]; }

  // Runs the loop until every accepted append has completed (bounded).
  void run() {
    for (int spins = 0; spins < 100000 && !all_done(); ++spins) uv_run(&loop_, UV_RUN_ONCE);
  }
  void close() {
    if (!writer_ || closed_) return;
    bool done = false;
    writer_->close([&] { done = true; });
    for (int spins = 0; spins < 100000 && !done; ++spins) uv_run(&loop_, UV_RUN_ONCE);
    closed_ = true;
  }

 private:
  bool all_done() const {
    for (const Result& r : results_) {
      if (!r.refused && !r.status) return false;
    }
    return true;
  }
  uv_loop_t loop_{};
  CountingObserver observer_;
  std::optional<SpoolWriter> writer_;
  std::vector<Result> results_;
  bool closed_ = false;
};

}  // namespace pp::spool::testing
