// Each topic's max.message.bytes as the upstream reports it (DescribeConfigs):
// the largest record batch the topic's log takes, measured as Kafka does
// (the whole batch, 12-byte log overhead included, after compression). Pure
// bookkeeping over a clock the caller passes; the upstream sends the requests.
//
// - A topic is asked about once it is in use, then again every max_age_ms
//   (a topic's config can be altered at any time); one request at a time.
// - A refusal for a topic (TOPIC_AUTHORIZATION_FAILED without DESCRIBE_CONFIGS
//   rights, UNKNOWN_TOPIC_OR_PARTITION) keeps what was known and is asked
//   again after max_age_ms: a limit is an optimisation, the broker still
//   judges every batch.
// - A value that is not a positive int32 is not taken.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/messages/describe_configs.h"

namespace pp::upstream {

inline constexpr std::string_view kMaxMessageBytesKey = "max.message.bytes";

struct LearnedLimit {
  std::string topic;
  std::int32_t max_message_bytes = 0;
};

struct LimitRefusal {
  std::string topic;
  ErrorCode error = ErrorCode::kNone;
  std::string reason;
};

struct LimitsRead {
  std::vector<LearnedLimit> changed;  // new, or different from before
  std::vector<LimitRefusal> refused;
  std::size_t unasked = 0;  // results naming a topic the request did not
};

class TopicMessageLimits {
 public:
  explicit TopicMessageLimits(std::uint64_t max_age_ms) : max_age_ms_(max_age_ms) {}

  // A request for the topics of `in_use` not asked about within max_age_ms,
  // or nullopt when none is due or one is outstanding. The topics it names
  // count as asked from `now` on.
  std::optional<DescribeConfigsRequest> due(const std::set<std::string>& in_use, std::uint64_t now);
  // The answer to the outstanding request.
  LimitsRead apply(const DescribeConfigsResponse& response);
  // The outstanding request failed (disconnect, timeout): its topics are due
  // again retry_ms after `now`.
  void failed(std::uint64_t now, std::uint64_t retry_ms);

  // 0 while unknown.
  std::int32_t max_message_bytes(std::string_view topic) const;
  void forget(const std::string& topic);
  bool outstanding() const { return !outstanding_.empty(); }

 private:
  struct Known {
    std::int32_t max_message_bytes = 0;  // 0: never learned
    std::uint64_t due_ms = 0;            // asked again from then on
  };

  std::uint64_t max_age_ms_;
  std::map<std::string, Known, std::less<>> topics_;
  std::set<std::string, std::less<>> outstanding_;
};

// max.message.bytes from one result's configs, if it is a positive int32.
std::optional<std::int32_t> parse_max_message_bytes(const DescribeConfigsResult& result);

}  // namespace pp::upstream
