#include "daemon/producer_driver.h"

#include <algorithm>

namespace pp {

ProducerDriver::ProducerDriver(uv_loop_t* loop, const upstream::UpstreamConfig& upstream_config,
                               PipelineConfig pipeline_config, PipelineObserver* observer, TopicLimits topic_limits)
    : clock_(loop),
      upstream_(loop, upstream_config, [this](const MetadataUpdate& update) { on_metadata(update); }),
      producer_(pipeline_config, upstream_, clock_, observer),
      later_(loop),
      wake_timer_(loop),
      directory_timer_(loop),
      request_timeout_ms_(upstream_config.request_timeout_ms),
      topic_limits_(topic_limits),
      topic_sweep_timer_(loop) {
  producer_.set_wakeup([this] { schedule_poll(); });
  upstream_.set_node_ready_listener([this](std::int32_t) { schedule_poll(); });
  upstream_.set_topic_limit_listener([this](const std::string& topic, std::int32_t max_message_bytes) {
    producer_.set_topic_batch_limit(topic, static_cast<std::size_t>(max_message_bytes));
  });
}

ProducerDriver::~ProducerDriver() {
  producer_.set_wakeup(nullptr);
  upstream_.set_node_ready_listener(nullptr);
  upstream_.set_topic_limit_listener(nullptr);
}

std::expected<void, std::string> ProducerDriver::start() {
  auto started = upstream_.start();
  if (!started) return started;
  schedule_poll();
  schedule_topic_sweep();
  return {};
}

void ProducerDriver::close() {
  topic_sweep_timer_.stop();
  upstream_.close();
}

void ProducerDriver::schedule_poll() {
  if (poll_scheduled_) return;
  poll_scheduled_ = true;
  // On the next loop iteration: events of this iteration coalesce into one
  // poll, and poll() never runs inside a callback of its own.
  later_.post([this] { run_poll(); });
}

void ProducerDriver::run_poll() {
  poll_scheduled_ = false;
  producer_.poll();
  const std::int64_t next = producer_.next_wakeup_ms();
  if (next < 0) {
    wake_timer_.stop();
    return;
  }
  const std::int64_t delay = std::max<std::int64_t>(0, next - clock_.now_ms());
  wake_timer_.start(static_cast<std::uint64_t>(delay), 0, [this] { schedule_poll(); });
}

void ProducerDriver::on_metadata(const MetadataUpdate& update) {
  producer_.on_metadata(update);
  for (Waiter& w : waiters_) {
    std::erase_if(w.refreshing, [&](const std::string& t) {
      return std::any_of(update.topics.begin(), update.topics.end(), [&](const auto& u) { return u.first == t; });
    });
  }
  answer_waiters();
}

bool ProducerDriver::settled(const std::string& name) const {
  const auto* t = producer_.topics().find(name);
  if (!t || t->error != ErrorCode::kNone || t->partitions.empty()) return false;
  return std::all_of(t->partitions.begin(), t->partitions.end(),
                     [](const auto& p) { return p.error == ErrorCode::kNone && p.leader_id >= 0; });
}

// ---- TopicDirectory ----

void ProducerDriver::describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
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
      log_refused_topic(t, admission);
      w.refused.emplace(t, admission.error);
      continue;
    }
    last_asked_ms_[t] = now;
    // Asked for now, so counted against the cap for the next topic.
    if (!settled(t)) {
      w.refreshing.push_back(t);
      upstream_.request_metadata({t}, allow_auto_topic_creation);
    }
  }
  waiters_.push_back(std::move(w));
  // Answer on a later iteration at the earliest (never inside describe()).
  later_.post([this] { answer_waiters(); });
}

bool ProducerDriver::answerable(const Waiter& w) const {
  return w.refreshing.empty() && std::all_of(w.topics.begin(), w.topics.end(), [&](const std::string& t) {
           return w.refused.contains(t) || producer_.topics().find(t) != nullptr;
         });
}

void ProducerDriver::answer(Waiter& w, bool final_answer) {
  std::vector<TopicDescription> out;
  for (const auto& name : w.topics) {
    TopicDescription d;
    d.name = name;
    if (auto refused = w.refused.find(name); refused != w.refused.end()) {
      d.error = refused->second;
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

void ProducerDriver::answer_waiters() {
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

}  // namespace pp
