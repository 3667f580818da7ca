// Idle retirement of partition state (upstream.metadata_max_idle_ms, as the
// Java producer's metadata.max.idle.ms forgets topics): without it every
// partition a client ever named keeps its state, and every topic stays in
// each Metadata refresh, for the life of the process.
#include <spdlog/spdlog.h>

#include "proxy/pipeline/idempotent_producer.h"

namespace pp {

std::size_t IdempotentProducer::retire_idle_partitions(std::int64_t used_before_ms) {
  // A memo of an older pid/epoch is moot: the partition's next batch under
  // the current one starts at 0 anyway (the lazy reset of a stale partition,
  // PIPELINE.md, draining rules).
  const ProducerIdAndEpoch current = identity_.current();
  if (identity_.state() == IdentityState::kReady) {
    for (auto memo = sequence_memos_.begin(); memo != sequence_memos_.end();) {
      auto next = std::next(memo);
      if (memo->second.owner != current) forget_sequence_memo(memo);
      memo = next;
    }
  }
  std::size_t retired = 0;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    const PartitionState& p = *it->second;
    if (!p.retirable() || p.last_used_ms() >= used_before_ms || rewrite_set_.contains(it->first)) {
      ++it;
      continue;
    }
    const SequenceMemo memo = p.sequence_memo();
    if (memo.owner.id != kNoProducerId) {
      auto [slot, added] = sequence_memos_.insert_or_assign(it->first, memo);
      if (added) sequence_memos_charge_.set(sequence_memos_charge_.bytes() + memo_bytes(slot->first));
    }
    it = partitions_.erase(it);
    ++retired;
  }
  if (retired > 0) {
    spdlog::debug("retired {} idle partitions ({} still in use, {} sequences remembered)", retired, partitions_.size(),
                  sequence_memos_.size());
  }
  // Memos go only at an epoch change; a client naming ever new topics would
  // grow them without end. Past a sixteenth of the budget, change the epoch:
  // every memo is then moot (the next sweep drops them) and nothing is
  // renumbered, as no retired partition has a batch.
  if (sequence_memos_charge_.bytes() > memory_.limit() / 16 && !bump_requested_ && identity_.ready()) {
    spdlog::info("{} sequence memos of retired partitions hold {} bytes: changing the producer epoch to drop them",
                 sequence_memos_.size(), sequence_memos_charge_.bytes());
    bump_requested_ = true;
    bump_reason_ = "sequence_memos";
  }
  return retired;
}

// A memo as the hash map holds it: node, key, value and the topic name. The
// map's bucket array is left out: at most a pointer per memo.
std::size_t IdempotentProducer::memo_bytes(const TopicPartition& tp) {
  constexpr std::size_t kNode = 2 * sizeof(void*) + sizeof(TopicPartition) + sizeof(SequenceMemo);
  return kNode + sizeof(void*) + tp.topic.capacity();
}

void IdempotentProducer::forget_sequence_memo(SequenceMemos::iterator memo) {
  sequence_memos_charge_.set(sequence_memos_charge_.bytes() - memo_bytes(memo->first));
  sequence_memos_.erase(memo);
}

std::set<std::string> IdempotentProducer::topics_with_partitions() const {
  std::set<std::string> topics;
  for (const auto& [tp, p] : partitions_) topics.insert(tp.topic);
  return topics;
}

void IdempotentProducer::forget_topics(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    topics_.forget(name);
    topic_batch_limits_.erase(name);
  }
  upstream_.set_leaders_in_use(topics_.leader_nodes());
}

}  // namespace pp
