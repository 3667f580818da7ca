// The daemon's TopicDirectory: which topics the proxy follows upstream, and
// what the front end is told about them, from the pipeline's TopicTable.
//
// - Admission: Kafka's name rule and a cap on the topics followed
//   (upstream.max_topics); a topic admitted is asked about upstream at once.
// - describe(): a client's Metadata question, answered from the TopicTable
//   once the topics are known and settled, or at request_timeout_ms.
// - Idle topics are forgotten (upstream.metadata_max_idle_ms, the Java
//   producer's metadata.max.idle.ms): a sweep retires idle partitions and
//   drops topics no client asked about and nothing produced to for that long.
// Without the cap and the sweep a client could grow every Metadata refresh,
// and the state kept per topic and partition, without bound.
//
// - The known topics (name and partition count, as the upstream last
//   described them): offered to a listener after every change, which the
//   daemon keeps in the spool. A start in spool mode restores them, and
//   until the upstream first answers, describe() answers from them at once
//   (restore_view()).
//
// Owned by the ProducerDriver, which tells it of every Metadata answer. Loop
// thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/base/log_limiter.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/net/deferred.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/clock.h"
#include "proxy/pipeline/idempotent_producer.h"
#include "proxy/upstream/upstream.h"

namespace pp {

// How many topics the proxy follows, and for how long an unused one
// (upstream.max_topics, upstream.metadata_max_idle_ms).
struct TopicLimits {
  std::size_t max_topics = 10000;
  std::int64_t max_idle_ms = 300000;
};

// Topic name -> partition count (> 0): the topics known upstream.
using KnownTopics = std::map<std::string, std::int32_t>;

class FollowedTopics final : public TopicDirectory {
 public:
  // Every reference must outlive this object. `later` runs describe()'s
  // first answers on a later loop iteration.
  FollowedTopics(uv_loop_t* loop, net::Deferred& later, upstream::Upstream& upstream, IdempotentProducer& producer,
                 const Clock& clock, TopicLimits limits, std::int32_t request_timeout_ms);
  FollowedTopics(const FollowedTopics&) = delete;
  FollowedTopics& operator=(const FollowedTopics&) = delete;

  // Starts the idle sweep.
  void start() { schedule_sweep(); }
  // Stops it.
  void close() { sweep_timer_.stop(); }
  // SIGHUP: describe() waits this long from now on.
  void set_request_timeout_ms(std::int32_t ms) { request_timeout_ms_ = ms; }
  // A Metadata answer reached the pipeline: the questions waiting for it may
  // be answered, and the known topics change.
  void on_metadata(const MetadataUpdate& update);

  // Spool mode, at start: `view` is the cluster view the spool last held
  // (docs/design/SPOOL.md, "Entries"). Its topics become known and followed
  // again (asked about upstream, at most max_topics of them, forgotten when
  // idle like any other). Until the upstream's first Metadata answer in this
  // process, describe() answers at once instead of waiting for it: a topic
  // of the view with its partition count, any other LEADER_NOT_AVAILABLE
  // (retriable, so clients ask again until Kafka answers).
  void restore_view(const KnownTopics& view);
  // Spool mode: a topic for which `answered_from_spool` is true and which is
  // known (no error, its partition count) is described at once, without
  // waiting for its partitions' leaders. Its records are taken by the spool
  // whether or not the upstream has leaders, and a client's Metadata refresh
  // held for request_timeout_ms would hold every answer queued behind it on
  // that connection, its produce answers among them.
  void answer_known_at_once(std::function<bool(const std::string&)> answered_from_spool) {
    answered_from_spool_ = std::move(answered_from_spool);
  }
  // Runs with the known topics after every change to them (Metadata
  // answers, idle topics forgotten); never inside describe().
  void set_view_listener(std::function<void(const KnownTopics&)> listener) { view_listener_ = std::move(listener); }
  const KnownTopics& known_topics() const { return known_; }
  // Answering from the restored view: restored, and no Metadata answer yet.
  bool answering_from_view() const { return restored_ && !upstream_.has_metadata(); }

  // ---- TopicDirectory ----
  TopicAdmission admit_topic(std::string_view name) override;
  std::size_t max_batch_bytes(std::string_view topic) const override {
    return static_cast<std::size_t>(upstream_.max_message_bytes(topic));
  }
  void describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                std::function<void(std::vector<TopicDescription>)> done) override;
  std::optional<std::string> topic_name(const Uuid& id) const override { return producer_.topics().name_of(id); }
  // From the brokers connected now: one that serves Produce v13+ and Metadata
  // v10+ decides yes. With none connected, the last answer stands.
  bool offers_topic_ids() const override;

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
  // A topic of answer_known_at_once() that the table knows with partitions.
  bool known_for_spool(const std::string& topic) const;
  bool answerable(const Waiter& w) const;
  void answer(Waiter& w, bool final_answer);
  void answer_waiters();
  void log_refused(const std::string& topic, const TopicAdmission& admission);
  void learn_known(const MetadataUpdate& update);
  void describe_from_view(const std::string& name, TopicDescription& d) const;

  void schedule_sweep();
  void forget_idle_topics();
  bool waited_on(const std::string& topic) const;

  net::Deferred& later_;
  upstream::Upstream& upstream_;
  IdempotentProducer& producer_;
  const Clock& clock_;
  TopicLimits limits_;
  std::int32_t request_timeout_ms_;
  net::Timer directory_timer_;  // describe() deadlines
  net::Timer sweep_timer_;
  std::vector<Waiter> waiters_;
  std::function<bool(const std::string&)> answered_from_spool_;
  // When a client last asked about each topic in use (Metadata).
  std::unordered_map<std::string, std::int64_t> last_asked_ms_;
  LogLimiter refused_log_{std::chrono::seconds(10)};
  KnownTopics known_;
  bool restored_ = false;  // restore_view() was called
  std::function<void(const KnownTopics&)> view_listener_;
  mutable bool offers_topic_ids_ = false;  // offers_topic_ids()'s last answer with a broker connected
};

}  // namespace pp
