#include "tests/bench/bench_common.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

namespace pp::bench {

Flags::Flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) {
      std::fprintf(stderr, "expected --name value pairs, got '%s'\n", a.c_str());
      std::exit(2);
    }
    values_[a.substr(2)] = argv[++i];
  }
}

std::string Flags::str(const std::string& name, const std::string& fallback) {
  used_[name] = true;
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::int64_t Flags::num(const std::string& name, std::int64_t fallback) {
  const std::string s = str(name, "");
  if (s.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') {
    std::fprintf(stderr, "--%s: not an integer: %s\n", name.c_str(), s.c_str());
    std::exit(2);
  }
  return v;
}

double Flags::real(const std::string& name, double fallback) {
  const std::string s = str(name, "");
  if (s.empty()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0') {
    std::fprintf(stderr, "--%s: not a number: %s\n", name.c_str(), s.c_str());
    std::exit(2);
  }
  return v;
}

void Flags::finish(std::string_view usage) {
  bool bad = false;
  for (const auto& [k, v] : values_) {
    if (!used_.contains(k)) {
      std::fprintf(stderr, "unknown flag --%s\n", k.c_str());
      bad = true;
    }
  }
  if (bad) {
    std::fprintf(stderr, "%.*s", static_cast<int>(usage.size()), usage.data());
    std::exit(2);
  }
}

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

double Latencies::percentile_ms(double q) {
  if (samples_.empty()) return -1;
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples_.size())));
  const std::size_t idx = std::min(samples_.size() - 1, rank == 0 ? 0 : rank - 1);
  return static_cast<double>(samples_[idx]) / 1000.0;
}

Payloads::Payloads(std::size_t record_bytes, std::uint64_t seed) : record_bytes_(record_bytes) {
  static const char* const kWords[] = {"order",   "customer", "payment",   "shipped", "status",   "amount", "currency",
                                       "EUR",     "USD",      "warehouse", "item",    "quantity", "price",  "total",
                                       "created", "updated",  "user",      "session", "click",    "page",   "region",
                                       "eu-west", "us-east",  "true",      "false",   "null",     "id",     "version",
                                       "event",   "payload",  "source",    "target"};
  std::mt19937_64 rng(seed);
  // 4 MiB of words plus a tail so any record window stays in bounds.
  const std::size_t pool_bytes = (4u << 20) + record_bytes;
  pool_.reserve(pool_bytes + 16);
  while (pool_.size() < pool_bytes) {
    const char* w = kWords[rng() % (sizeof kWords / sizeof kWords[0])];
    while (*w) pool_.push_back(static_cast<std::uint8_t>(*w++));
    pool_.push_back(rng() % 5 == 0 ? static_cast<std::uint8_t>('0' + rng() % 10) : ' ');
  }
}

const std::uint8_t* Payloads::record(std::uint64_t i) const {
  // A large odd stride walks the whole pool before repeating a window.
  const std::size_t span = pool_.size() - record_bytes_;
  return pool_.data() + (i * 7919u) % span;
}

void JsonLine::key(const std::string& k) {
  if (!body_.empty()) body_ += ",";
  body_ += "\"" + k + "\":";
}

JsonLine& JsonLine::add(const std::string& k, double value) {
  key(k);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(value) ? value : -1.0);
  body_ += buf;
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, const std::string& value) {
  key(k);
  body_ += "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') body_ += '\\';
    body_ += (c == '\n') ? ' ' : c;
  }
  body_ += "\"";
  return *this;
}

std::vector<HostPort> parse_bootstrap(const std::string& list) {
  std::vector<HostPort> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const std::size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      std::fprintf(stderr, "bad bootstrap entry '%s'\n", item.c_str());
      std::exit(2);
    }
    out.push_back({item.substr(0, colon), std::atoi(item.c_str() + colon + 1)});
    start = end + 1;
  }
  return out;
}

}  // namespace pp::bench
