#include "proxy/upstream/topic_message_limits.h"

#include <charconv>
#include <limits>

namespace pp::upstream {

std::optional<DescribeConfigsRequest> TopicMessageLimits::due(const std::set<std::string>& in_use, std::uint64_t now) {
  if (!outstanding_.empty()) return std::nullopt;
  DescribeConfigsRequest request;
  for (const std::string& topic : in_use) {
    auto it = topics_.try_emplace(topic).first;
    if (now < it->second.due_ms) continue;
    it->second.due_ms = now + max_age_ms_;
    outstanding_.insert(topic);
    DescribeConfigsResource& r = request.resources.emplace_back();
    r.resource_type = kConfigResourceTopic;
    r.resource_name = topic;
    r.configuration_keys = std::vector<std::string>{std::string(kMaxMessageBytesKey)};
  }
  if (request.resources.empty()) return std::nullopt;
  return request;
}

LimitsRead TopicMessageLimits::apply(const DescribeConfigsResponse& response) {
  LimitsRead out;
  for (const DescribeConfigsResult& result : response.results) {
    if (result.resource_type != kConfigResourceTopic || !outstanding_.contains(result.resource_name)) {
      ++out.unasked;
      continue;
    }
    auto known = topics_.find(result.resource_name);
    if (known == topics_.end()) continue;  // forgotten while asked
    if (result.error_code != ErrorCode::kNone) {
      out.refused.push_back({result.resource_name, result.error_code, result.error_message.value_or("")});
      continue;
    }
    const auto limit = parse_max_message_bytes(result);
    if (!limit) {
      out.refused.push_back({result.resource_name, ErrorCode::kNone, "no positive max.message.bytes in the answer"});
      continue;
    }
    if (*limit != known->second.max_message_bytes) {
      known->second.max_message_bytes = *limit;
      out.changed.push_back({result.resource_name, *limit});
    }
  }
  outstanding_.clear();
  return out;
}

void TopicMessageLimits::failed(std::uint64_t now, std::uint64_t retry_ms) {
  for (const std::string& topic : outstanding_) {
    if (auto it = topics_.find(topic); it != topics_.end()) it->second.due_ms = now + retry_ms;
  }
  outstanding_.clear();
}

std::int32_t TopicMessageLimits::max_message_bytes(std::string_view topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? 0 : it->second.max_message_bytes;
}

void TopicMessageLimits::forget(const std::string& topic) {
  topics_.erase(topic);
  outstanding_.erase(topic);
}

std::optional<std::int32_t> parse_max_message_bytes(const DescribeConfigsResult& result) {
  for (const DescribeConfigsEntry& e : result.configs) {
    if (e.name != kMaxMessageBytesKey || !e.value) continue;
    std::int64_t v = 0;
    const std::string& s = *e.value;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    if (v <= 0 || v > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
    return static_cast<std::int32_t>(v);
  }
  return std::nullopt;
}

}  // namespace pp::upstream
