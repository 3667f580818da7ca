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
      topics_(loop, later_, upstream_, producer_, clock_, topic_limits, upstream_config.request_timeout_ms) {
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
  topics_.start();
  return {};
}

void ProducerDriver::close() {
  topics_.close();
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
  topics_.on_metadata(update);
}

}  // namespace pp
