// Reading a registry's current values in tests: the structured form of a
// scrape (prometheus-cpp's Collect()), so a test asks "what is series X now"
// without parsing text.
#pragma once

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pp::testing {

using LabelMap = std::map<std::string, std::string>;

inline const prometheus::MetricFamily* family_of(const std::vector<prometheus::MetricFamily>& families,
                                                 const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

inline LabelMap labels_of(const prometheus::ClientMetric& m) {
  LabelMap out;
  for (const auto& l : m.label) out[l.name] = l.value;
  return out;
}

// The value of the series with exactly `labels`: a counter's or gauge's value,
// a histogram's sample count. nullopt when no such series exists.
inline std::optional<double> value_of(const prometheus::Registry& registry, const std::string& name,
                                      const LabelMap& labels = {}) {
  const auto families = registry.Collect();
  const auto* f = family_of(families, name);
  if (!f) return std::nullopt;
  for (const auto& m : f->metric) {
    if (labels_of(m) != labels) continue;
    switch (f->type) {
      case prometheus::MetricType::Counter:
        return m.counter.value;
      case prometheus::MetricType::Gauge:
        return m.gauge.value;
      case prometheus::MetricType::Histogram:
        return static_cast<double>(m.histogram.sample_count);
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

inline const prometheus::ClientMetric::Histogram* histogram_of(const std::vector<prometheus::MetricFamily>& families,
                                                               const std::string& name, const LabelMap& labels = {}) {
  const auto* f = family_of(families, name);
  if (!f) return nullptr;
  for (const auto& m : f->metric) {
    if (labels_of(m) == labels) return &m.histogram;
  }
  return nullptr;
}

// Every series of one family, by label set.
inline std::vector<LabelMap> series_of(const prometheus::Registry& registry, const std::string& name) {
  std::vector<LabelMap> out;
  const auto families = registry.Collect();
  if (const auto* f = family_of(families, name)) {
    for (const auto& m : f->metric) out.push_back(labels_of(m));
  }
  return out;
}

struct ToolResult {
  int exit_code = -1;
  std::string output;
};

// `promtool check metrics` over `exposition`, bounded by timeout(1).
inline ToolResult promtool_check_metrics(const std::string& exposition) {
  char path[] = "/tmp/pp_promtool_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  FILE* f = fdopen(fd, "w");
  std::fwrite(exposition.data(), 1, exposition.size(), f);
  std::fclose(f);
  const std::string cmd = std::string("timeout -k 2 30 promtool check metrics < ") + path + " 2>&1";
  ToolResult result;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::remove(path);
  return result;
}

}  // namespace pp::testing
