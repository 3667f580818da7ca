// Idle retirement of partition state (upstream.metadata_max_idle_ms, as the
// Java producer's metadata.max.idle.ms forgets topics): without it every
// partition a client ever named keeps its state, and every topic stays in
// each Metadata refresh, for the life of the process.
#include <spdlog/spdlog.h>

#include "proxy/pipeline/idempotent_producer.h"

namespace pp {

std::size_t IdempotentProducer::retire_idle_partitions(std::int64_t used_before_ms) {
  // A memo of an older pid/epoch is moot: the partition's next batch under
  // the current one starts at 0 anyway (PIPELINE.md C.4 rule 4).
  const ProducerIdAndEpoch current = identity_.current();
  if (identity_.state() == IdentityState::kReady) {
    std::erase_if(sequence_memos_, [&](const auto& entry) { return entry.second.owner != current; });
  }
  std::size_t retired = 0;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    const PartitionState& p = *it->second;
    if (!p.retirable() || p.last_used_ms() >= used_before_ms || rewrite_set_.contains(it->first)) {
      ++it;
      continue;
    }
    const SequenceMemo memo = p.sequence_memo();
    if (memo.owner.id != kNoProducerId) sequence_memos_[it->first] = memo;
    it = partitions_.erase(it);
    ++retired;
  }
  if (retired > 0) {
    spdlog::debug("retired {} idle partitions ({} still in use, {} sequences remembered)", retired, partitions_.size(),
                  sequence_memos_.size());
  }
  return retired;
}

std::set<std::string> IdempotentProducer::topics_with_partitions() const {
  std::set<std::string> topics;
  for (const auto& [tp, p] : partitions_) topics.insert(tp.topic);
  return topics;
}

void IdempotentProducer::forget_topics(const std::vector<std::string>& names) {
  for (const std::string& name : names) topics_.forget(name);
  upstream_.set_leaders_in_use(topics_.leader_nodes());
}

}  // namespace pp
