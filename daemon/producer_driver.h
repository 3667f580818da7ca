// Runs the idempotent producer on a libuv loop: the Upstream's sockets feed it
// events, and it is polled once per loop iteration after any event, and at
// its next_wakeup_ms() by a timer. Also answers the front end's topic
// questions from the upstream metadata cache (TopicDirectory).
#pragma once

#include <uv.h>

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/base/log_limiter.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/net/deferred.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/idempotent_producer.h"
#include "proxy/upstream/upstream.h"

namespace pp {

class LoopClock final : public Clock {
 public:
  explicit LoopClock(uv_loop_t* loop) : loop_(loop) {}
  std::int64_t now_ms() const override {
    uv_update_time(loop_);
    return static_cast<std::int64_t>(uv_now(loop_));
  }

 private:
  uv_loop_t* loop_;
};

// How many topics the proxy follows, and for how long an unused one
// (upstream.max_topics, upstream.metadata_max_idle_ms).
struct TopicLimits {
  std::size_t max_topics = 10000;
  std::int64_t max_idle_ms = 300000;
};

class ProducerDriver final : public TopicDirectory {
 public:
  ProducerDriver(uv_loop_t* loop, const upstream::UpstreamConfig& upstream_config, PipelineConfig pipeline_config,
                 PipelineObserver* observer = nullptr, TopicLimits topic_limits = {});
  ~ProducerDriver() override;
  ProducerDriver(const ProducerDriver&) = delete;
  ProducerDriver& operator=(const ProducerDriver&) = delete;

  std::expected<void, std::string> start();
  // Upstream connections closed; outstanding work fails on later iterations.
  void close();

  IdempotentProducer& producer() { return producer_; }
  upstream::Upstream& upstream() { return upstream_; }
  // SIGHUP: upstream requests and topic questions wait this long from now on.
  void set_request_timeout_ms(std::int32_t ms) {
    request_timeout_ms_ = ms;
    upstream_.set_request_timeout_ms(static_cast<int>(ms));
  }
  const Clock& clock() const { return clock_; }

  // TopicDirectory
  TopicAdmission admit_topic(std::string_view name) override;
  std::size_t max_batch_bytes(std::string_view topic) const override {
    return static_cast<std::size_t>(upstream_.max_message_bytes(topic));
  }
  void describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                std::function<void(std::vector<TopicDescription>)> done) override;

 private:
  struct Waiter {
    std::vector<std::string> topics;
    // Topics asked for again upstream: the answer waits for a response that
    // describes them (or the deadline), not for the stale cached entry.
    std::vector<std::string> refreshing;
    // Answered without asking upstream: an illegal name, or over the cap.
    std::map<std::string, ErrorCode> refused;
    std::function<void(std::vector<TopicDescription>)> done;
    std::int64_t deadline_ms = 0;
  };

  // Known with no error and a leader for every partition: a cached answer
  // the client can use. A topic Kafka is still creating (auto-creation
  // answers UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE first) is not.
  bool settled(const std::string& topic) const;

  void schedule_poll();
  void run_poll();
  void on_metadata(const MetadataUpdate& update);
  bool answerable(const Waiter& w) const;
  void answer(Waiter& w, bool final_answer);
  void answer_waiters();

  // topic lifetime (driver_topics.cc)
  void schedule_topic_sweep();
  void forget_idle_topics();
  bool waited_on(const std::string& topic) const;
  void log_refused_topic(const std::string& topic, const TopicAdmission& admission);

  LoopClock clock_;
  upstream::Upstream upstream_;
  IdempotentProducer producer_;
  net::Deferred later_;         // the coalesced poll, and first answers to describe()
  net::Timer wake_timer_;       // the pipeline's next timed work
  net::Timer directory_timer_;  // describe() deadlines
  bool poll_scheduled_ = false;
  std::vector<Waiter> waiters_;
  std::int32_t request_timeout_ms_;
  TopicLimits topic_limits_;
  net::Timer topic_sweep_timer_;
  // When a client last asked about each topic in use (Metadata).
  std::unordered_map<std::string, std::int64_t> last_asked_ms_;
  LogLimiter refused_topic_log_{std::chrono::seconds(10)};
};

}  // namespace pp
