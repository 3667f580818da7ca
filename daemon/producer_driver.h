// Runs the idempotent producer on a libuv loop: the Upstream's sockets feed it
// events, and it is polled once per loop iteration after any event, and at
// its next_wakeup_ms() by a timer. Also answers the front end's topic
// questions from the upstream metadata cache (TopicDirectory).
#pragma once

#include <uv.h>

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "proxy/frontend/topic_directory.h"
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

class ProducerDriver final : public TopicDirectory {
 public:
  ProducerDriver(uv_loop_t* loop, upstream::UpstreamConfig upstream_config, PipelineConfig pipeline_config,
                 PipelineObserver* observer = nullptr);
  ~ProducerDriver() override;
  ProducerDriver(const ProducerDriver&) = delete;
  ProducerDriver& operator=(const ProducerDriver&) = delete;

  std::expected<void, std::string> start();
  // Upstream connections closed; outstanding work fails on later iterations.
  void close();

  IdempotentProducer& producer() { return producer_; }
  upstream::Upstream& upstream() { return upstream_; }
  const Clock& clock() const { return clock_; }

  // TopicDirectory
  void describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                std::function<void(std::vector<TopicDescription>)> done) override;

 private:
  struct Waiter {
    std::vector<std::string> topics;
    std::function<void(std::vector<TopicDescription>)> done;
    std::int64_t deadline_ms = 0;
  };

  void schedule_poll();
  void run_poll();
  void on_metadata(const MetadataUpdate& update);
  bool answerable(const Waiter& w) const;
  void answer(Waiter& w, bool final_answer);
  void answer_waiters(bool timed_out_only);

  LoopClock clock_;
  upstream::Upstream upstream_;
  IdempotentProducer producer_;
  net::Timer poll_soon_;
  net::Timer wake_timer_;
  net::Timer directory_timer_;
  bool poll_scheduled_ = false;
  std::vector<Waiter> waiters_;
  std::int32_t request_timeout_ms_;
};

}  // namespace pp
