// Which topics the proxy follows upstream: Kafka's name rule and a cap on
// what comes in (upstream.max_topics), and idle topics forgotten
// (upstream.metadata_max_idle_ms, the Java producer's metadata.max.idle.ms).
// Without them a client could grow every Metadata refresh, and the state
// kept per topic and partition, without bound.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/producer_driver.h"
#include "proxy/frontend/produce_conversion.h"

namespace pp {

TopicAdmission ProducerDriver::admit_topic(std::string_view name) {
  if (!is_legal_topic_name(name)) {
    return {ErrorCode::kInvalidTopicException,
            "not a legal Kafka topic name (1 to 249 characters of [a-zA-Z0-9._-], not '.' or '..')"};
  }
  const auto& in_use = upstream_.topics_in_use();
  const std::string topic(name);
  if (in_use.contains(topic)) return {};
  if (in_use.size() < topic_limits_.max_topics) {
    // Followed from now on, so the next new topic of the same request is
    // counted against the cap; its records would ask for it a moment later.
    upstream_.request_metadata({topic});
    return {};
  }
  return {ErrorCode::kPolicyViolation,
          "the proxy already follows " + std::to_string(in_use.size()) +
              " topics, upstream.max_topics; idle ones are forgotten after upstream.metadata_max_idle_ms"};
}

void ProducerDriver::log_refused_topic(const std::string& topic, const TopicAdmission& admission) {
  if (auto held_back = refused_topic_log_.admit(static_cast<std::uint64_t>(clock_.now_ms()))) {
    spdlog::warn("Metadata for topic '{}' answered {}: {} ({} more refused since the last line)", topic.substr(0, 300),
                 error_name(admission.error), admission.reason, *held_back);
  }
}

void ProducerDriver::schedule_topic_sweep() {
  // A topic is forgotten between max_idle_ms and 1.25 x max_idle_ms after its
  // last use; at least a second apart, at most a minute.
  const std::int64_t interval = std::clamp<std::int64_t>(topic_limits_.max_idle_ms / 4, 1000, 60000);
  topic_sweep_timer_.start(static_cast<std::uint64_t>(interval), 0, [this] {
    forget_idle_topics();
    schedule_topic_sweep();
  });
}

bool ProducerDriver::waited_on(const std::string& topic) const {
  return std::any_of(waiters_.begin(), waiters_.end(), [&](const Waiter& w) {
    return std::find(w.topics.begin(), w.topics.end(), topic) != w.topics.end();
  });
}

void ProducerDriver::forget_idle_topics() {
  const std::int64_t used_before = clock_.now_ms() - topic_limits_.max_idle_ms;
  producer_.retire_idle_partitions(used_before);
  const std::set<std::string> produced_to = producer_.topics_with_partitions();
  std::vector<std::string> idle;
  for (const std::string& topic : upstream_.topics_in_use()) {
    if (produced_to.contains(topic) || waited_on(topic)) continue;
    auto asked = last_asked_ms_.find(topic);
    if (asked != last_asked_ms_.end() && asked->second >= used_before) continue;
    idle.push_back(topic);
  }
  std::erase_if(last_asked_ms_, [&](const auto& entry) { return entry.second < used_before; });
  if (idle.empty()) return;
  upstream_.forget_topics(idle);
  producer_.forget_topics(idle);
  spdlog::info("forgot {} topics unused for {} ms (first: '{}'); {} still followed", idle.size(),
               topic_limits_.max_idle_ms, idle.front(), upstream_.topics_in_use().size());
}

}  // namespace pp
