#include "config/suggest.h"

#include <algorithm>
#include <utility>

#include "config/schema.h"

namespace pp::config {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the DP table: the swap rule looks two rows back.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(typed, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

namespace {

// Kafka's own names for what our keys mean, dots as underscores: operators
// bring their producer.properties with them, and edit distance alone would
// not get from batch_size to batch_bytes.
constexpr std::pair<std::string_view, std::string_view> kKafkaNames[] = {
    {"batch_size", "batch_bytes"},
    {"buffer_memory", "buffer_memory_bytes"},
    {"compression_type", "compression"},
    {"max_in_flight_requests_per_connection", "max_in_flight_per_connection"},
    {"socket_request_max_bytes", "max_request_bytes"},
    {"connections_max_idle_ms", "idle_timeout_ms"},
};

// Kafka producer keys with no counterpart here: suggesting a key that only
// looks alike would mislead (the proxy always produces with acks=all).
constexpr std::string_view kKafkaOnlyNames[] = {"acks"};

}  // namespace

std::optional<std::string> suggest_key(std::string_view section, std::string_view name) {
  std::string wanted(name);
  std::replace(wanted.begin(), wanted.end(), '.', '_');
  std::replace(wanted.begin(), wanted.end(), '-', '_');
  for (const auto& [kafka, ours] : kKafkaNames) {
    if (wanted == kafka) wanted = ours;
  }
  for (const std::string_view kafka_only : kKafkaOnlyNames) {
    if (wanted == kafka_only) return std::nullopt;
  }
  // Rank by the edits to the key's name, plus one if it lives in another
  // section: a typo in the right section beats the right name elsewhere only
  // when it is the closer of the two.
  const std::size_t limit = std::max<std::size_t>(2, wanted.size() / 3);
  std::optional<std::string> best;
  std::size_t best_score = limit + 2;
  for (const auto& k : all_keys()) {
    const std::size_t d = edit_distance(wanted, k.name);
    if (d > limit) continue;
    const std::size_t score = d + (k.section == section ? 0 : 1);
    if (score < best_score) {
      best_score = score;
      best = k.full_name();
    }
  }
  return best;
}

std::optional<std::string> suggest_section(std::string_view section) {
  std::vector<std::string> sections;
  for (const auto s : all_sections()) sections.emplace_back(s);
  return nearest(section, sections);
}

}  // namespace pp::config
