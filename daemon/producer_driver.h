// Runs the idempotent producer on a libuv loop: the Upstream's sockets feed it
// events, and it is polled once per loop iteration after any event, and at
// its next_wakeup_ms() by a timer. Owns the three and wires them: metadata,
// node readiness and topic limits from the upstream to the producer, and the
// FollowedTopics that answers the front end's topic questions.
#pragma once

#include <uv.h>

#include <expected>
#include <string>

#include "daemon/followed_topics.h"
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

class ProducerDriver {
 public:
  ProducerDriver(uv_loop_t* loop, const upstream::UpstreamConfig& upstream_config, PipelineConfig pipeline_config,
                 PipelineObserver* observer = nullptr, TopicLimits topic_limits = {});
  ~ProducerDriver();
  ProducerDriver(const ProducerDriver&) = delete;
  ProducerDriver& operator=(const ProducerDriver&) = delete;

  std::expected<void, std::string> start();
  // Upstream connections closed; outstanding work fails on later iterations.
  void close();

  IdempotentProducer& producer() { return producer_; }
  upstream::Upstream& upstream() { return upstream_; }
  // SIGHUP: upstream requests and topic questions wait this long from now on.
  void set_request_timeout_ms(std::int32_t ms) {
    topics_.set_request_timeout_ms(ms);
    upstream_.set_request_timeout_ms(static_cast<int>(ms));
  }
  const Clock& clock() const { return clock_; }

  // The front end's TopicDirectory.
  FollowedTopics& followed_topics() { return topics_; }

 private:
  void schedule_poll();
  void run_poll();
  void on_metadata(const MetadataUpdate& update);

  LoopClock clock_;
  upstream::Upstream upstream_;
  IdempotentProducer producer_;
  net::Deferred later_;    // the coalesced poll, and first answers to describe()
  net::Timer wake_timer_;  // the pipeline's next timed work
  bool poll_scheduled_ = false;
  FollowedTopics topics_;
};

}  // namespace pp
