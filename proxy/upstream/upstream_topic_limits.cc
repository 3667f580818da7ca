// Upstream: learning each topic's max.message.bytes (DescribeConfigs) after
// the Metadata answers that name the topics (topic_message_limits.h).
#include "proxy/upstream/log.h"
#include "proxy/upstream/upstream.h"

namespace pp::upstream {

namespace {

// A failed request (disconnect, timeout) said nothing about the topics: they
// are asked about again this much later, on a timer of its own, rather than
// after metadata_max_age_ms.
constexpr std::uint64_t kLimitRetryMs = 5000;

}  // namespace

void Upstream::refresh_topic_limits(const MetadataUpdate& update) {
  // Only topics the cluster has: asking about one not created yet would
  // only be refused, and then not asked again for metadata_max_age_ms. An
  // answer may name only some topics: the others keep their standing.
  for (const auto& [name, topic] : update.topics) {
    if (topic.error == ErrorCode::kNone) {
      limit_topics_.insert(name);
    } else {
      limit_topics_.erase(name);
    }
  }
  ask_topic_limits();
}

void Upstream::ask_topic_limits() {
  if (closed_ || !on_topic_limit_ || message_limits_.outstanding() || limit_topics_.empty()) return;
  // A broker without DescribeConfigs (librdkafka's mock cluster, the test
  // cluster) teaches nothing: every batch is still judged by the broker.
  BrokerConnection* c = pick_ready(ApiKey::kDescribeConfigs);
  if (!c) return;
  auto request = message_limits_.due(limit_topics_, now());
  if (!request) return;
  limits_retry_timer_.stop();
  const std::int16_t version = *c->versions().version(ApiKey::kDescribeConfigs);
  log().debug("{}: DescribeConfigs v{} for max.message.bytes of {} topics", c->describe(), version,
              request->resources.size());
  c->send(*request, version,
          make_sink<DescribeConfigsResponse>([this](std::expected<DescribeConfigsResponse, ErrorCode> result) {
            on_topic_limits(std::move(result));
          }));
}

void Upstream::on_topic_limits(std::expected<DescribeConfigsResponse, ErrorCode> result) {
  if (closed_) return;
  if (!result) {
    log().debug("upstream: DescribeConfigs failed ({}); asking again in {} ms", error_name(result.error()),
                kLimitRetryMs);
    message_limits_.failed(now(), kLimitRetryMs);
    limits_retry_timer_.start(kLimitRetryMs, 0, [this] { ask_topic_limits(); });
    return;
  }
  const LimitsRead read = message_limits_.apply(*result);
  for (const LimitRefusal& r : read.refused) {
    log().warn("upstream: max.message.bytes of topic {} not learned ({}{}{}); its batches are judged by the broker",
               r.topic, r.error == ErrorCode::kNone ? "" : error_name(r.error), r.reason.empty() ? "" : ": ", r.reason);
  }
  if (read.unasked > 0) {
    log().warn("upstream: ignored {} DescribeConfigs results for resources the proxy did not ask about", read.unasked);
  }
  for (const LearnedLimit& l : read.changed) {
    log().info("upstream: topic {} takes record batches up to {} bytes (max.message.bytes)", l.topic,
               l.max_message_bytes);
    if (on_topic_limit_) on_topic_limit_(l.topic, l.max_message_bytes);
  }
}

}  // namespace pp::upstream
