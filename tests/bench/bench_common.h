// Shared pieces of the load generators (bench_rdkafka_producer,
// bench_open_loop, bench_chatty_client): flags, clocks, CPU time, latency
// percentiles, text-like payloads and the one-line JSON result every tool
// prints. Load generators report; they never assert (issue 8).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pp::bench {

// `--name value` pairs. A tool declares what it reads with a default; a flag
// given but never read is an error, so a typo cannot silently run the wrong
// benchmark.
class Flags {
 public:
  Flags(int argc, char** argv);
  std::string str(const std::string& name, const std::string& fallback);
  std::int64_t num(const std::string& name, std::int64_t fallback);
  double real(const std::string& name, double fallback);
  bool has(const std::string& name) const { return values_.contains(name); }
  // Exits 2 naming any flag no call above asked for.
  void finish(std::string_view usage);

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> used_;
};

// Monotonic nanoseconds (CLOCK_MONOTONIC): latencies and rates.
std::int64_t now_ns();
// Wall-clock milliseconds since the epoch: Kafka record timestamps.
std::int64_t wall_ms();
// User + system CPU seconds of this process, all threads (getrusage).
double cpu_seconds();

// Latency samples in microseconds. Memory is bounded by the caller's record
// count: reserve() once, then add() never reallocates past it (extra samples
// are counted, not stored).
class Latencies {
 public:
  void reserve(std::size_t n) { samples_.reserve(n); }
  void add(std::int64_t micros) {
    if (samples_.size() < samples_.capacity())
      samples_.push_back(micros);
    else
      ++dropped_;
  }
  std::size_t count() const { return samples_.size(); }
  // q in [0, 1]; milliseconds, nearest-rank. Sorts on first use.
  double percentile_ms(double q);

 private:
  std::vector<std::int64_t> samples_;
  std::size_t dropped_ = 0;
  bool sorted_ = false;
};

// A pool of text-like bytes (random words from a small vocabulary, like the
// records micro-benchmark): compressible as real payloads are, so lz4 and
// zstd have work to do; random bytes would not compress at all. Record i
// takes `size` bytes starting at a per-record offset, so records differ.
class Payloads {
 public:
  Payloads(std::size_t record_bytes, std::uint64_t seed);
  const std::uint8_t* record(std::uint64_t i) const;
  std::size_t size() const { return record_bytes_; }

 private:
  std::size_t record_bytes_;
  std::vector<std::uint8_t> pool_;
};

// Builds the single JSON object each tool prints as its last stdout line.
class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, std::int64_t value);
  JsonLine& add(const std::string& key, const std::string& value);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(const std::string& k);
  std::string body_;
};

// host:port,host:port -> pairs; exits 2 on a malformed entry.
struct HostPort {
  std::string host;
  int port = 0;
};
std::vector<HostPort> parse_bootstrap(const std::string& list);

}  // namespace pp::bench
