#include "proxy/pipeline/idle_partitions.h"

#include <spdlog/spdlog.h>

#include <iterator>

namespace pp {

std::size_t IdlePartitions::retire(std::int64_t used_before_ms) {
  // A memo of an older pid/epoch is moot: the partition's next batch under
  // the current one starts at 0 anyway (the lazy reset of a stale partition,
  // PIPELINE.md, draining rules).
  const ProducerIdAndEpoch current = identity_.current();
  if (identity_.state() == IdentityState::kReady) {
    for (auto memo = memos_.begin(); memo != memos_.end();) {
      auto next = std::next(memo);
      if (memo->second.owner != current) forget(memo);
      memo = next;
    }
  }
  std::size_t retired = 0;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    const PartitionState& p = *it->second;
    if (!p.retirable() || p.last_used_ms() >= used_before_ms || bumper_.renumbers(it->first)) {
      ++it;
      continue;
    }
    const SequenceMemo memo = p.sequence_memo();
    if (memo.owner.id != kNoProducerId) {
      auto [slot, added] = memos_.insert_or_assign(it->first, memo);
      if (added) charge_.set(charge_.bytes() + memo_bytes(slot->first));
    }
    it = partitions_.erase(it);
    ++retired;
  }
  if (retired > 0) {
    spdlog::debug("retired {} idle partitions ({} still in use, {} sequences remembered)", retired, partitions_.size(),
                  memos_.size());
  }
  // Memos go only at an epoch change; a client naming ever new topics would
  // grow them without end. Past a sixteenth of the budget, change the epoch:
  // every memo is then moot (the next sweep drops them) and nothing is
  // renumbered, as no retired partition has a batch.
  if (charge_.bytes() > memory_.limit() / 16 && !bumper_.requested() && identity_.ready()) {
    spdlog::info("{} sequence memos of retired partitions hold {} bytes: changing the producer epoch to drop them",
                 memos_.size(), charge_.bytes());
    bumper_.request_epoch_change("sequence_memos");
  }
  return retired;
}

void IdlePartitions::resume(PartitionState& p) {
  if (auto memo = memos_.find(p.tp()); memo != memos_.end()) {
    p.resume(memo->second);
    forget(memo);
  }
}

// A memo as the hash map holds it: node, key, value and the topic name. The
// map's bucket array is left out: at most a pointer per memo.
std::size_t IdlePartitions::memo_bytes(const TopicPartition& tp) {
  constexpr std::size_t kNode = 2 * sizeof(void*) + sizeof(TopicPartition) + sizeof(SequenceMemo);
  return kNode + sizeof(void*) + tp.topic.capacity();
}

void IdlePartitions::forget(SequenceMemos::iterator memo) {
  charge_.set(charge_.bytes() - memo_bytes(memo->first));
  memos_.erase(memo);
}

}  // namespace pp
