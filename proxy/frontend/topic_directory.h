// What the front end needs to answer a client's Metadata request and to find
// the topics of a Produce: the upstream's topics, their ids and partition
// counts. Implemented over the upstream
// metadata cache by the daemon; a fake in the front end's unit tests.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/types.h"

namespace pp {

struct TopicDescription {
  std::string name;
  ErrorCode error = ErrorCode::kNone;  // e.g. UNKNOWN_TOPIC_OR_PARTITION, as upstream said
  Uuid topic_id;                       // zero when upstream doesn't report ids
  bool is_internal = false;
  std::int32_t partition_count = 0;
};

// Whether records for a topic may be taken (TopicDirectory::admit_topic).
struct TopicAdmission {
  ErrorCode error = ErrorCode::kNone;
  std::string reason;  // for the log, when refused
};

class TopicDirectory {
 public:
  virtual ~TopicDirectory() = default;

  // Asked for every topic of a Produce request before its records are taken:
  // INVALID_TOPIC_EXCEPTION for a name Kafka refuses (topic_name.h),
  // POLICY_VIOLATION when a topic not in use yet would pass the topic cap.
  // describe() applies the same rules to the topics it is asked about.
  virtual TopicAdmission admit_topic(std::string_view name) = 0;

  // The largest record batch the topic takes upstream (its max.message.bytes,
  // which Kafka measures after compression), or 0 while not known.
  virtual std::size_t max_batch_bytes(std::string_view /*topic*/) const { return 0; }

  // Produce v13+ names topics by id only (KIP-516): the topic the upstream
  // reports with `id`, or nullopt when the proxy follows none with it (the
  // zero id included). Ids are the upstream cluster's own, from its Metadata
  // v10+ answers, so they match what a client sees straight from the cluster.
  virtual std::optional<std::string> topic_name(const Uuid& id) const = 0;

  // Whether ApiVersions offers clients Produce v13: the upstream cluster
  // serves Produce v13 itself, which only clusters that name every topic by
  // id do. A cluster that doesn't (older, or no ids) keeps clients on v12,
  // naming topics, as it would keep them if they connected to it directly.
  // Asked once per ApiVersions request, on the loop thread.
  virtual bool offers_topic_ids() const = 0;

  // Describes `topics` (nullopt: every topic upstream knows), refreshing
  // upstream metadata first for topics not known yet; with
  // `allow_auto_topic_creation` the refresh lets the upstream create them, as
  // a direct request to it would. `done` runs exactly once, never inside this
  // call.
  virtual void describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                        std::function<void(std::vector<TopicDescription>)> done) = 0;
};

}  // namespace pp
