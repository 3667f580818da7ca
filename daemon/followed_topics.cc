#include "daemon/followed_topics.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "proxy/frontend/produce_conversion.h"
#include "proxy/protocol/messages/metadata.h"

namespace pp {

FollowedTopics::FollowedTopics(uv_loop_t* loop, net::Deferred& later, upstream::Upstream& upstream,
                               IdempotentProducer& producer, const Clock& clock, TopicLimits limits,
                               std::int32_t request_timeout_ms)
    : later_(later),
      upstream_(upstream),
      producer_(producer),
      clock_(clock),
      limits_(limits),
      request_timeout_ms_(request_timeout_ms),
      directory_timer_(loop),
      sweep_timer_(loop) {}

void FollowedTopics::on_metadata(const MetadataUpdate& update) {
  learn_known(update);
  for (Waiter& w : waiters_) {
    std::erase_if(w.refreshing, [&](const std::string& t) {
      return std::any_of(update.topics.begin(), update.topics.end(), [&](const auto& u) { return u.first == t; });
    });
  }
  answer_waiters();
}

// A topic described with partitions is known with their count; one the
// upstream says does not exist is no longer known. Other errors (a leader
// election) leave the count as it was.
void FollowedTopics::learn_known(const MetadataUpdate& update) {
  bool changed = false;
  for (const auto& [name, reported] : update.topics) {
    const auto* t = producer_.topics().find(name);
    if (t && t->error == ErrorCode::kNone && !t->partitions.empty()) {
      const auto count = static_cast<std::int32_t>(t->partitions.size());
      auto [it, added] = known_.try_emplace(name, count);
      changed = changed || added || it->second != count;
      it->second = count;
    } else if (reported.error == ErrorCode::kUnknownTopicOrPartition) {
      changed = known_.erase(name) > 0 || changed;
    }
  }
  if (changed && view_listener_) view_listener_(known_);
}

void FollowedTopics::restore_view(const KnownTopics& view) {
  restored_ = true;
  std::vector<std::string> topics;
  const std::int64_t now = clock_.now_ms();
  for (const auto& [name, partitions] : view) {
    if (known_.size() >= limits_.max_topics) break;
    if (partitions <= 0 || !is_legal_topic_name(name)) continue;
    known_.emplace(name, partitions);
    // Idle from now: forgotten after max_idle_ms unless a client uses it.
    last_asked_ms_[name] = now;
    topics.push_back(name);
  }
  if (!topics.empty()) upstream_.request_metadata(topics);
}

void FollowedTopics::describe_from_view(const std::string& name, TopicDescription& d) const {
  const auto it = known_.find(name);
  if (it == known_.end()) {
    d.error = ErrorCode::kLeaderNotAvailable;
    return;
  }
  d.error = ErrorCode::kNone;
  d.partition_count = it->second;
}

bool FollowedTopics::settled(const std::string& name) const {
  const auto* t = producer_.topics().find(name);
  if (!t || t->error != ErrorCode::kNone || t->partitions.empty()) return false;
  return std::all_of(t->partitions.begin(), t->partitions.end(),
                     [](const auto& p) { return p.error == ErrorCode::kNone && p.leader_id >= 0; });
}

bool FollowedTopics::known_for_spool(const std::string& topic) const {
  if (!answered_from_spool_ || !answered_from_spool_(topic)) return false;
  const auto* t = producer_.topics().find(topic);
  return t != nullptr && t->error == ErrorCode::kNone && !t->partitions.empty();
}

TopicAdmission FollowedTopics::admit_topic(std::string_view name) {
  if (!is_legal_topic_name(name)) {
    return {ErrorCode::kInvalidTopicException,
            "not a legal Kafka topic name (1 to 249 characters of [a-zA-Z0-9._-], not '.' or '..')"};
  }
  const auto& in_use = upstream_.topics_in_use();
  const std::string topic(name);
  if (in_use.contains(topic)) return {};
  if (in_use.size() < limits_.max_topics) {
    // Followed from now on, so the next new topic of the same request is
    // counted against the cap; its records would ask for it a moment later.
    upstream_.request_metadata({topic});
    return {};
  }
  return {ErrorCode::kPolicyViolation,
          "the proxy already follows " + std::to_string(in_use.size()) +
              " topics, upstream.max_topics; idle ones are forgotten after upstream.metadata_max_idle_ms"};
}

bool FollowedTopics::offers_topic_ids() const {
  const auto produce = upstream_.highest_negotiated_version(ApiKey::kProduce);
  const auto metadata = upstream_.highest_negotiated_version(ApiKey::kMetadata);
  if (!produce || !metadata) return offers_topic_ids_;
  offers_topic_ids_ = *produce >= kProduceTopicIdVersion && *metadata >= kMetadataTopicIdVersion;
  return offers_topic_ids_;
}

void FollowedTopics::describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                              std::function<void(std::vector<TopicDescription>)> done) {
  Waiter w;
  // "All topics" means every topic this proxy has been asked about: the
  // upstream is only ever asked for topics in use.
  if (topics) {
    w.topics = std::move(*topics);
  } else {
    w.topics.assign(upstream_.topics_in_use().begin(), upstream_.topics_in_use().end());
  }
  w.done = std::move(done);
  const std::int64_t now = clock_.now_ms();
  w.deadline_ms = now + request_timeout_ms_;
  for (const auto& t : w.topics) {
    if (w.refused.contains(t)) continue;
    TopicAdmission admission = admit_topic(t);
    if (admission.error != ErrorCode::kNone) {
      log_refused(t, admission);
      w.refused.emplace(t, admission.error);
      continue;
    }
    last_asked_ms_[t] = now;
    // Asked for now, so counted against the cap for the next topic.
    if (!settled(t)) {
      if (!known_for_spool(t)) w.refreshing.push_back(t);
      upstream_.request_metadata({t}, allow_auto_topic_creation);
    }
  }
  waiters_.push_back(std::move(w));
  // Answer on a later iteration at the earliest (never inside describe()).
  later_.post([this] { answer_waiters(); });
}

bool FollowedTopics::answerable(const Waiter& w) const {
  if (answering_from_view()) return true;
  return w.refreshing.empty() && std::all_of(w.topics.begin(), w.topics.end(), [&](const std::string& t) {
           return w.refused.contains(t) || producer_.topics().find(t) != nullptr;
         });
}

void FollowedTopics::answer(Waiter& w, bool final_answer) {
  std::vector<TopicDescription> out;
  for (const auto& name : w.topics) {
    TopicDescription d;
    d.name = name;
    if (auto refused = w.refused.find(name); refused != w.refused.end()) {
      d.error = refused->second;
    } else if (answering_from_view()) {
      describe_from_view(name, d);
    } else if (const auto* t = producer_.topics().find(name)) {
      d.error = t->error;
      d.topic_id = t->topic_id;
      d.partition_count = static_cast<std::int32_t>(t->partitions.size());
    } else {
      d.error = final_answer ? ErrorCode::kLeaderNotAvailable : ErrorCode::kUnknownTopicOrPartition;
    }
    out.push_back(std::move(d));
  }
  auto done = std::move(w.done);
  done(std::move(out));
}

void FollowedTopics::answer_waiters() {
  const std::int64_t now = clock_.now_ms();
  std::vector<Waiter> ready;
  std::int64_t next_deadline = -1;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    const bool timed_out = now >= it->deadline_ms;
    if (answerable(*it) || timed_out) {
      ready.push_back(std::move(*it));
      it = waiters_.erase(it);
    } else {
      next_deadline = next_deadline < 0 ? it->deadline_ms : std::min(next_deadline, it->deadline_ms);
      ++it;
    }
  }
  if (next_deadline >= 0) {
    directory_timer_.start(static_cast<std::uint64_t>(next_deadline - now), 0, [this] { answer_waiters(); });
  }
  // A topic still unknown at the deadline: the upstream could not be asked in
  // time, which a client should retry (LEADER_NOT_AVAILABLE is retriable).
  for (auto& w : ready) answer(w, !answerable(w));
}

void FollowedTopics::log_refused(const std::string& topic, const TopicAdmission& admission) {
  if (auto held_back = refused_log_.admit(static_cast<std::uint64_t>(clock_.now_ms()))) {
    spdlog::warn("Metadata for topic '{}' answered {}: {} ({} more refused since the last line)", topic.substr(0, 300),
                 error_name(admission.error), admission.reason, *held_back);
  }
}

void FollowedTopics::schedule_sweep() {
  // A topic is forgotten between max_idle_ms and 1.25 x max_idle_ms after its
  // last use; at least a second apart, at most a minute.
  const std::int64_t interval = std::clamp<std::int64_t>(limits_.max_idle_ms / 4, 1000, 60000);
  sweep_timer_.start(static_cast<std::uint64_t>(interval), 0, [this] {
    forget_idle_topics();
    schedule_sweep();
  });
}

bool FollowedTopics::waited_on(const std::string& topic) const {
  return std::any_of(waiters_.begin(), waiters_.end(), [&](const Waiter& w) {
    return std::find(w.topics.begin(), w.topics.end(), topic) != w.topics.end();
  });
}

void FollowedTopics::forget_idle_topics() {
  const std::int64_t used_before = clock_.now_ms() - limits_.max_idle_ms;
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
  bool forgot_known = false;
  for (const std::string& topic : idle) forgot_known = known_.erase(topic) > 0 || forgot_known;
  if (forgot_known && view_listener_) view_listener_(known_);
  spdlog::info("forgot {} topics unused for {} ms (first: '{}'); {} still followed", idle.size(), limits_.max_idle_ms,
               idle.front(), upstream_.topics_in_use().size());
}

}  // namespace pp
