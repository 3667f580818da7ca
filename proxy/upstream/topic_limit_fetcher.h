// Learns each topic's max.message.bytes from the cluster: after every
// Metadata answer, the topics it names without error are asked about with
// DescribeConfigs (v1-v4) over a ready connection that serves it, one
// request at a time; the bookkeeping of what is due and what was learned is
// TopicMessageLimits'. A failed request (disconnect, timeout) is asked again
// on a timer of its own, a few seconds later. New and changed limits go to
// the listener (the pipeline's batch building, the front end's record
// checks). A cluster without DescribeConfigs (librdkafka's mock, the test
// cluster) teaches nothing: every batch is then judged by the broker.
//
// Owned by the Upstream, whose connections it borrows through Brokers. Loop
// thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <expected>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "proxy/net/timer.h"
#include "proxy/pipeline/upstream_port.h"
#include "proxy/protocol/messages/describe_configs.h"
#include "proxy/upstream/broker_connection.h"
#include "proxy/upstream/topic_message_limits.h"

namespace pp::upstream {

class TopicLimitFetcher {
 public:
  // Where requests go.
  class Brokers {
   public:
    virtual ~Brokers() = default;
    // The least-loaded ready connection that serves `key`; null if none.
    virtual BrokerConnection* pick_ready(ApiKey key) const = 0;
  };
  using Listener = std::function<void(const std::string& topic, std::int32_t max_message_bytes)>;

  // `max_age_ms`: how long a learned limit stands before it is asked again.
  TopicLimitFetcher(uv_loop_t* loop, std::uint64_t max_age_ms, Brokers& brokers);
  TopicLimitFetcher(const TopicLimitFetcher&) = delete;
  TopicLimitFetcher& operator=(const TopicLimitFetcher&) = delete;

  // Told each limit when first learned and when it changes. Without a
  // listener nothing is asked.
  void set_listener(Listener listener) { listener_ = std::move(listener); }
  // A Metadata answer: the topics it names without error may be asked about
  // (one not created yet would only be refused); the others it names may not.
  void on_metadata(const MetadataUpdate& update);
  // Asks what is due, if a connection can take it (call when one became ready).
  void ask();
  // An idle topic: no longer asked about, its limit forgotten.
  void forget(const std::string& topic);
  // Nothing is asked from now on, and a late answer is ignored.
  void close();

  // 0 while not known.
  std::int32_t max_message_bytes(std::string_view topic) const { return limits_.max_message_bytes(topic); }

 private:
  void on_answer(std::expected<DescribeConfigsResponse, ErrorCode> result);
  std::uint64_t now() const {
    uv_update_time(loop_);  // see BrokerConnection::now
    return net::now_ms(loop_);
  }

  uv_loop_t* loop_;
  Brokers& brokers_;
  Listener listener_;
  bool closed_ = false;
  TopicMessageLimits limits_;
  std::set<std::string> topics_;  // named without error by the latest Metadata answer naming them
  net::Timer retry_timer_;        // a failed DescribeConfigs asks again from it
};

}  // namespace pp::upstream
