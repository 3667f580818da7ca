#include "tests/broker/cluster_options.h"

#include <charconv>
#include <cstdlib>
#include <set>

namespace pp::test_broker {

namespace {

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Kafka's Topic.validate: 1-249 characters of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::expected<TopicSpec, std::string> parse_topic_spec(std::string_view text) {
  TopicSpec spec;
  const auto first = text.find(':');
  if (first == std::string_view::npos) return std::unexpected("expected NAME:PARTITIONS[:RETAIN]");
  spec.name = std::string(text.substr(0, first));
  std::string_view rest = text.substr(first + 1);
  const auto second = rest.find(':');
  auto partitions = parse_int(rest.substr(0, second));
  if (!partitions) return std::unexpected("PARTITIONS must be a number in '" + std::string(text) + "'");
  spec.partitions = *partitions;
  if (second != std::string_view::npos) {
    auto retain = parse_int(rest.substr(second + 1));
    if (!retain) return std::unexpected("RETAIN must be a number in '" + std::string(text) + "'");
    spec.retain = *retain;
  }
  return spec;
}

std::string_view to_string(NoStateRule rule) {
  switch (rule) {
    case NoStateRule::kKafka0_11:
      return "0.11";
    case NoStateRule::kKafka1_0:
      return "1.0";
    case NoStateRule::kKafka2_5:
      return "2.5";
    case NoStateRule::kKafka4_5:
      return "4.5";
  }
  return "?";
}

std::optional<NoStateRule> parse_no_state_rule(std::string_view text) {
  for (auto r : {NoStateRule::kKafka0_11, NoStateRule::kKafka1_0, NoStateRule::kKafka2_5, NoStateRule::kKafka4_5}) {
    if (text == to_string(r)) return r;
  }
  return std::nullopt;
}

std::string_view to_string(RetainPlacement placement) {
  switch (placement) {
    case RetainPlacement::kPartition:
      return "partition";
    case RetainPlacement::kTopic:
      return "topic";
    case RetainPlacement::kBoth:
      return "both";
  }
  return "?";
}

std::optional<RetainPlacement> parse_retain_placement(std::string_view text) {
  for (auto p : {RetainPlacement::kPartition, RetainPlacement::kTopic, RetainPlacement::kBoth}) {
    if (text == to_string(p)) return p;
  }
  return std::nullopt;
}

std::expected<void, std::string> apply_test_environment(TestClusterOptions& options) {
  if (const char* rule = std::getenv("PP_TEST_FIRST_SEQUENCE_RULE"); rule && *rule) {
    const std::string_view v(rule);
    if (v == "1") {
      options.no_state_rule = NoStateRule::kKafka4_5;
    } else if (v != "0") {
      return std::unexpected("PP_TEST_FIRST_SEQUENCE_RULE must be 0 or 1, not '" + std::string(v) + "'");
    }
  }
  if (const char* placement = std::getenv("PP_TEST_RETAIN_PLACEMENT"); placement && *placement) {
    auto parsed = parse_retain_placement(placement);
    if (!parsed) {
      return std::unexpected("PP_TEST_RETAIN_PLACEMENT must be partition, topic or both, not '" +
                             std::string(placement) + "'");
    }
    options.retain_placement = *parsed;
  }
  return {};
}

std::expected<void, std::string> validate(const TestClusterOptions& options) {
  if (options.brokers < 1 || options.brokers > 64) {
    return std::unexpected("--brokers must be between 1 and 64");
  }
  if (options.legacy_brokers < 0 || options.legacy_brokers > options.brokers) {
    return std::unexpected("--legacy-brokers must be between 0 and the number of brokers");
  }
  std::set<std::string> names;
  for (const auto& t : options.topics) {
    if (!valid_topic_name(t.name)) return std::unexpected("invalid topic name '" + t.name + "'");
    if (!names.insert(t.name).second) return std::unexpected("topic '" + t.name + "' given twice");
    if (t.partitions < 1 || t.partitions > 10000) {
      return std::unexpected("topic '" + t.name + "': PARTITIONS must be between 1 and 10000");
    }
    if (t.retain < kDefaultRetain || t.retain > 100000) {
      return std::unexpected("topic '" + t.name + "': RETAIN must be at least 5 (KIP-1269 minimum)");
    }
  }
  if (options.max_request_bytes < 1024) return std::unexpected("max_request_bytes is too small");
  return {};
}

}  // namespace pp::test_broker
