// Reading one sample out of Prometheus' text format (what GET /metrics
// returns), for tests that check values through the real endpoint:
//
//   auto w = sample_value(http_get(port, "/metrics").body, "produce_proxy_partition_window",
//                         {{"topic", "t"}, {"partition", "0"}});
//   EXPECT_EQ(w, 20);
//
// Labels must match exactly (all of them, in any order). Histograms are read
// through their _bucket/_sum/_count sample names.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace pp::testing {

using SampleLabels = std::map<std::string, std::string>;

// Parses `{a="x",b="y\"z"}` at the start of `s`; advances past it.
inline std::optional<SampleLabels> parse_sample_labels(std::string_view& s) {
  SampleLabels labels;
  if (s.empty() || s.front() != '{') return labels;
  s.remove_prefix(1);
  for (;;) {
    if (s.empty()) return std::nullopt;
    if (s.front() == '}') {
      s.remove_prefix(1);
      return labels;
    }
    if (s.front() == ',') s.remove_prefix(1);
    const auto eq = s.find("=\"");
    if (eq == std::string_view::npos) return std::nullopt;
    std::string key(s.substr(0, eq));
    s.remove_prefix(eq + 2);
    std::string value;
    while (!s.empty() && s.front() != '"') {
      if (s.front() == '\\' && s.size() > 1) {
        s.remove_prefix(1);
        value += s.front() == 'n' ? '\n' : s.front();
      } else {
        value += s.front();
      }
      s.remove_prefix(1);
    }
    if (s.empty()) return std::nullopt;
    s.remove_prefix(1);
    labels[std::move(key)] = std::move(value);
  }
}

inline std::optional<double> sample_value(const std::string& exposition, const std::string& name,
                                          const SampleLabels& labels = {}) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::string_view s(line);
    if (s.substr(0, name.size()) != name) continue;
    s.remove_prefix(name.size());
    if (!s.empty() && s.front() != '{' && s.front() != ' ') continue;  // a longer name
    const auto parsed = parse_sample_labels(s);
    if (!parsed || *parsed != labels) continue;
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    // strtod reads Prometheus' +Inf, -Inf and NaN spellings too.
    const std::string number(s.substr(0, s.find(' ')));
    return std::strtod(number.c_str(), nullptr);
  }
  return std::nullopt;
}

}  // namespace pp::testing
