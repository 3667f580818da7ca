#include "proxy/upstream/topic_limit_fetcher.h"

#include <utility>

#include "proxy/upstream/log.h"

namespace pp::upstream {

namespace {

// A failed request (disconnect, timeout) said nothing about the topics: they
// are asked about again this much later, on a timer of its own, rather than
// after metadata_max_age_ms.
constexpr std::uint64_t kLimitRetryMs = 5000;

}  // namespace

TopicLimitFetcher::TopicLimitFetcher(uv_loop_t* loop, std::uint64_t max_age_ms, Brokers& brokers)
    : loop_(loop), brokers_(brokers), limits_(max_age_ms), retry_timer_(loop) {}

void TopicLimitFetcher::on_metadata(const MetadataUpdate& update) {
  // Only topics the cluster has: asking about one not created yet would
  // only be refused, and then not asked again for metadata_max_age_ms. An
  // answer may name only some topics: the others keep their standing.
  for (const auto& [name, topic] : update.topics) {
    if (topic.error == ErrorCode::kNone) {
      topics_.insert(name);
    } else {
      topics_.erase(name);
    }
  }
  ask();
}

void TopicLimitFetcher::ask() {
  if (closed_ || !listener_ || limits_.outstanding() || topics_.empty()) return;
  BrokerConnection* c = brokers_.pick_ready(ApiKey::kDescribeConfigs);
  if (!c) return;
  auto request = limits_.due(topics_, now());
  if (!request) return;
  retry_timer_.stop();
  const std::int16_t version = *c->versions().version(ApiKey::kDescribeConfigs);
  log().debug("{}: DescribeConfigs v{} for max.message.bytes of {} topics", c->describe(), version,
              request->resources.size());
  c->send(*request, version,
          make_sink<DescribeConfigsResponse>(
              [this](std::expected<DescribeConfigsResponse, ErrorCode> result) { on_answer(std::move(result)); }));
}

void TopicLimitFetcher::forget(const std::string& topic) {
  limits_.forget(topic);
  topics_.erase(topic);
}

void TopicLimitFetcher::close() {
  closed_ = true;
  retry_timer_.stop();
}

void TopicLimitFetcher::on_answer(std::expected<DescribeConfigsResponse, ErrorCode> result) {
  if (closed_) return;
  if (!result) {
    log().debug("upstream: DescribeConfigs failed ({}); asking again in {} ms", error_name(result.error()),
                kLimitRetryMs);
    limits_.failed(now(), kLimitRetryMs);
    retry_timer_.start(kLimitRetryMs, 0, [this] { ask(); });
    return;
  }
  const LimitsRead read = limits_.apply(*result);
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
    if (listener_) listener_(l.topic, l.max_message_bytes);
  }
}

}  // namespace pp::upstream
