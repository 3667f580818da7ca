// Idle retirement of partition state (upstream.metadata_max_idle_ms, as the
// Java producer's metadata.max.idle.ms forgets topics; "Idle retirement" in
// docs/design/PIPELINE.md): without it every partition a client ever named
// keeps its state, and every topic stays in each Metadata refresh, for the
// life of the process.
//
// A retired partition leaves only its sequence memo, so that its next batch
// under the same producer id and epoch continues the sequence. The memos are
// owned here and charged to the memory budget (MemoryUse::kSequenceMemos);
// past a sixteenth of the budget they are dropped by an epoch change
// (EpochBumper). Loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "proxy/pipeline/epoch_bumper.h"
#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/producer_identity.h"
#include "proxy/pipeline/topic_partition.h"

namespace pp {

class IdlePartitions {
 public:
  // Retires from `partitions`; charges `memory`; asks `bumper` for the
  // epoch change that makes memos moot.
  IdlePartitions(PartitionMap& partitions, const ProducerIdentity& identity, EpochBumper& bumper, MemoryBudget& memory)
      : partitions_(partitions),
        identity_(identity),
        bumper_(bumper),
        memory_(memory),
        charge_(memory_.charge(MemoryUse::kSequenceMemos, 0)) {}

  // A partition with nothing queued, in flight or unresolved, not awaiting a
  // renumbering and last given a run before `used_before_ms`, gives up its
  // state; only its sequence memo stays (until an epoch change makes it
  // moot). Returns how many retired.
  std::size_t retire(std::int64_t used_before_ms);
  // A partition state just created for `p.tp()` continues from its memo, if
  // it was retired, and the memo is dropped.
  void resume(PartitionState& p);
  std::size_t memo_count() const { return memos_.size(); }

 private:
  using SequenceMemos = std::unordered_map<TopicPartition, SequenceMemo, TopicPartitionHash>;
  static std::size_t memo_bytes(const TopicPartition& tp);
  void forget(SequenceMemos::iterator memo);

  PartitionMap& partitions_;
  const ProducerIdentity& identity_;
  EpochBumper& bumper_;
  MemoryBudget& memory_;
  SequenceMemos memos_;  // of retired partitions
  MemoryBudget::Charge charge_;
};

}  // namespace pp
