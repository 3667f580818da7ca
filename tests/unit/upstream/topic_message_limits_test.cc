// Each topic's max.message.bytes, learned with DescribeConfigs: when it is
// asked, what is taken from an answer, and what is not.
#include "proxy/upstream/topic_message_limits.h"

#include <gtest/gtest.h>

namespace pp::upstream {
namespace {

constexpr std::uint64_t kMaxAge = 300000;

DescribeConfigsResult topic_result(const std::string& name, std::optional<std::string> value) {
  DescribeConfigsResult r;
  r.resource_type = kConfigResourceTopic;
  r.resource_name = name;
  DescribeConfigsEntry& e = r.configs.emplace_back();
  e.name = "max.message.bytes";
  e.value = std::move(value);
  return r;
}

std::vector<std::string> names(const DescribeConfigsRequest& request) {
  std::vector<std::string> out;
  for (const auto& r : request.resources) {
    EXPECT_EQ(r.resource_type, kConfigResourceTopic);
    EXPECT_EQ(r.configuration_keys, std::vector<std::string>{"max.message.bytes"}) << "one key, not every config";
    out.push_back(r.resource_name);
  }
  return out;
}

TEST(TopicMessageLimits, NewTopicsAreAskedAtOnceThenOnlyAfterTheMaxAge) {
  TopicMessageLimits limits(kMaxAge);
  auto first = limits.due({"a", "b"}, 1000);
  ASSERT_TRUE(first);
  EXPECT_EQ(names(*first), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(limits.due({"a", "b", "c"}, 1001)) << "one request at a time";

  DescribeConfigsResponse answer;
  answer.results = {topic_result("a", "4096"), topic_result("b", "1048588")};
  const LimitsRead read = limits.apply(answer);
  ASSERT_EQ(read.changed.size(), 2u);
  EXPECT_EQ(limits.max_message_bytes("a"), 4096);
  EXPECT_EQ(limits.max_message_bytes("b"), 1048588);
  EXPECT_EQ(limits.max_message_bytes("c"), 0) << "unknown";

  auto second = limits.due({"a", "b", "c"}, 2000);
  ASSERT_TRUE(second);
  EXPECT_EQ(names(*second), std::vector<std::string>{"c"});
  limits.apply({});
  EXPECT_FALSE(limits.due({"a", "b", "c"}, 1000 + kMaxAge - 1));
  auto aged = limits.due({"a", "b", "c"}, 1000 + kMaxAge);
  ASSERT_TRUE(aged);
  EXPECT_EQ(names(*aged), (std::vector<std::string>{"a", "b"})) << "c was asked later";
}

TEST(TopicMessageLimits, AnUnchangedLimitIsNotReportedAgainAndAChangedOneIs) {
  TopicMessageLimits limits(kMaxAge);
  DescribeConfigsResponse answer;
  answer.results = {topic_result("a", "4096")};
  ASSERT_TRUE(limits.due({"a"}, 0));
  EXPECT_EQ(limits.apply(answer).changed.size(), 1u);
  ASSERT_TRUE(limits.due({"a"}, kMaxAge));
  EXPECT_TRUE(limits.apply(answer).changed.empty());
  answer.results = {topic_result("a", "8192")};
  ASSERT_TRUE(limits.due({"a"}, 2 * kMaxAge));
  const LimitsRead read = limits.apply(answer);
  ASSERT_EQ(read.changed.size(), 1u);
  EXPECT_EQ(read.changed[0].max_message_bytes, 8192);
}

TEST(TopicMessageLimits, RefusalsAndBadValuesKeepWhatWasKnown) {
  TopicMessageLimits limits(kMaxAge);
  DescribeConfigsResponse answer;
  answer.results = {topic_result("a", "4096")};
  ASSERT_TRUE(limits.due({"a", "b", "c", "d", "e"}, 0));
  limits.apply(answer);

  ASSERT_TRUE(limits.due({"a", "b", "c", "d", "e"}, kMaxAge));
  DescribeConfigsResult refused = topic_result("a", std::nullopt);
  refused.configs.clear();
  refused.error_code = ErrorCode::kTopicAuthorizationFailed;
  refused.error_message = "no DESCRIBE_CONFIGS";
  answer.results = {refused,
                    topic_result("b", "-1"),
                    topic_result("c", "4096x"),
                    topic_result("d", "3000000000"),
                    topic_result("e", std::nullopt),
                    topic_result("not-asked", "10")};
  const LimitsRead read = limits.apply(answer);
  EXPECT_TRUE(read.changed.empty());
  ASSERT_EQ(read.refused.size(), 5u);
  EXPECT_EQ(read.refused[0].error, ErrorCode::kTopicAuthorizationFailed);
  EXPECT_EQ(read.unasked, 1u);
  EXPECT_EQ(limits.max_message_bytes("a"), 4096) << "a refusal does not forget";
  for (const char* t : {"b", "c", "d", "e", "not-asked"}) EXPECT_EQ(limits.max_message_bytes(t), 0) << t;
}

TEST(TopicMessageLimits, AFailedRequestIsAskedAgainAfterTheRetryNotTheMaxAge) {
  TopicMessageLimits limits(kMaxAge);
  ASSERT_TRUE(limits.due({"a"}, 0));
  limits.failed(100, 5000);
  EXPECT_FALSE(limits.outstanding());
  EXPECT_FALSE(limits.due({"a"}, 5099));
  EXPECT_TRUE(limits.due({"a"}, 5100));
}

TEST(TopicMessageLimits, AForgottenTopicIsUnknownAndItsLateAnswerIgnored) {
  TopicMessageLimits limits(kMaxAge);
  ASSERT_TRUE(limits.due({"a", "b"}, 0));
  limits.forget("a");
  DescribeConfigsResponse answer;
  answer.results = {topic_result("a", "4096"), topic_result("b", "2048")};
  const LimitsRead read = limits.apply(answer);
  ASSERT_EQ(read.changed.size(), 1u);
  EXPECT_EQ(read.changed[0].topic, "b");
  EXPECT_EQ(limits.max_message_bytes("a"), 0);
}

}  // namespace
}  // namespace pp::upstream
