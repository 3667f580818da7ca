// The topics in use as the pipeline knows them: the one owner of topic ids
// and partition leadership (docs/design/ARCHITECTURE.md, "Who owns what").
// Fed by the upstream's Metadata answers and by KIP-951 leader hints in
// ProduceResponses. Pure data and rules, unit-tested:
//
// - A partition whose leader epoch is lower than the one known is stale and
//   ignored (Java's Metadata.updateLatestMetadata): a lagging broker may
//   answer after a fresher one.
// - A leader change is a new leader id or a higher leader epoch. Brokers
//   below Metadata v7 report no epochs (-1, librdkafka's mock), so there the
//   leader id alone tells.
// - A different non-zero topic id means the topic was deleted and created
//   again (KIP-516): its partitions are taken as they come, epochs and all.
// - A report without a topic id (Metadata < v10) keeps the id known, as
//   Java does, so a later id change is still seen.
// - A leader hint is taken only with a leader id and epoch >= 0 and an epoch
//   newer than the one known (Metadata.updatePartitionLeadership).
// - Each non-zero id names one topic (name_of): a topic re-created or
//   forgotten takes its old id with it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/pipeline/topic_partition.h"
#include "proxy/pipeline/upstream_port.h"

namespace pp {

// What one apply() changed: for the log, and for tests of the rules above.
struct TopicChanges {
  struct LeaderChange {
    std::int32_t partition = 0;
    std::int32_t old_leader = -1;
    std::int32_t new_leader = -1;
    std::int32_t old_epoch = -1;
    std::int32_t new_epoch = -1;
  };
  std::vector<LeaderChange> leader_changes;
  bool recreated = false;
  std::size_t stale_partitions = 0;
};

class TopicTable {
 public:
  TopicChanges apply(const std::string& name, const TopicLeadership& reported);
  // True if taken.
  bool take_leader_hint(const TopicPartition& tp, std::int32_t leader_id, std::int32_t leader_epoch);

  // The topic is no longer followed (idle): its id and epochs are dropped.
  void forget(std::string_view name);

  const TopicLeadership* find(std::string_view name) const;
  // Null when the topic is unknown or in error, or has no such partition.
  const PartitionLeadership* partition(const TopicPartition& tp) const;
  // Zero when unknown: a Produce naming the topic then goes out below v13.
  Uuid topic_id(std::string_view name) const;
  // The topic known by `id`, or nullopt (also for the zero id): how a client's
  // Produce v13+ (KIP-516), which names topics by id only, finds its topic.
  std::optional<std::string> name_of(const Uuid& id) const;
  // The brokers leading any partition of any topic known.
  std::set<std::int32_t> leader_nodes() const;
  // How many Metadata answers have described the topic since it was first
  // (or again, after forget()) known: a partition missing from one answer
  // may be one just added that the answering broker has not learned yet.
  std::uint64_t answers(std::string_view name) const;

 private:
  std::map<std::string, TopicLeadership, std::less<>> topics_;
  std::map<std::string, std::uint64_t, std::less<>> answers_;
  std::map<Uuid, std::string> names_by_id_;  // every non-zero topic_id of topics_
};

}  // namespace pp
