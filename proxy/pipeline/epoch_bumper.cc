#include "proxy/pipeline/epoch_bumper.h"

#include <spdlog/spdlog.h>

#include "proxy/records/record_batch.h"

namespace pp {

void EpochBumper::request(PartitionState& p, std::string_view reason) {
  if (!requested_) reason_ = std::string(reason);
  requested_ = true;
  rewrite_set_.insert(p.tp());
  spdlog::debug("epoch bump requested for {}: {}", p.tp().to_string(), reason);
}

void EpochBumper::request_epoch_change(std::string_view reason) {
  if (requested_) return;
  requested_ = true;
  reason_ = std::string(reason);
}

void EpochBumper::maybe_bump() {
  if (!requested_ || !identity_.ready()) return;
  // Drain, then bump: nothing of the rewrite set may still be in flight, or a
  // response under the old epoch could arrive after the renumbering.
  for (const auto& tp : rewrite_set_) {
    auto it = partitions_.find(tp);
    if (it != partitions_.end() && (it->second->inflight_batches() > 0 || it->second->journal_pending())) return;
  }
  const ProducerIdAndEpoch& current = identity_.current();
  if (identity_.epoch_exhausted()) {
    // librdkafka #3720 / KAFKA-20090: epoch exhausted, a new producer id is needed.
    identity_.set_state(IdentityState::kUninitialized, "epoch exhausted: requesting a new producer id");
    return;
  }
  if (new_id_required_) {
    identity_.set_state(IdentityState::kUninitialized,
                        "the identity was restored from the spool: requesting a new producer id (" + reason_ + ")");
    return;
  }
  apply(ProducerIdAndEpoch{current.id, ProducerEpoch(static_cast<std::int16_t>(current.epoch.value + 1))});
}

void EpochBumper::on_new_producer_id(const ProducerIdAndEpoch& fresh) {
  if (requested_) {
    apply(fresh);  // the epoch was exhausted: the rewrite set moves to the new id
  } else {
    identity_.advance_to(fresh);
  }
}

void EpochBumper::apply(const ProducerIdAndEpoch& next) {
  const ProducerIdAndEpoch previous = identity_.current();
  spdlog::info("producer epoch bump: id {} epoch {} -> id {} epoch {} ({}; {} partitions renumbered)",
               previous.id.value, previous.epoch.value, next.id.value, next.epoch.value, reason_, rewrite_set_.size());
  const bool new_id = next.id != previous.id;
  identity_.advance_to(next);
  for (const auto& tp : rewrite_set_) {
    auto it = partitions_.find(tp);
    if (it == partitions_.end()) continue;  // not reached: a partition in the rewrite set is never retired
    PartitionState& p = *it->second;
    p.renumber(next);
    std::int64_t ambiguous = 0;
    std::int64_t replayed = 0;
    for (const auto& b : p.unacked()) {
      patch_producer_state(b->bytes, next.id.value, next.epoch.value, b->base_sequence);
      b->state = BatchState::kAwaitingRetry;
      b->retry_at_ms = 0;
      b->journal_due = b->durable;  // the new sequences are journaled before the batch goes again
      // A batch replayed after a restart that the broker could not match
      // (SPOOL.md, "Why replay is exactly once") is counted apart.
      (b->restored ? replayed : ambiguous) += b->ever_ambiguous ? 1 : 0;
    }
    if (ambiguous > 0) count_ambiguous_renumbered(p, ambiguous, "epoch_bump");
    if (replayed > 0) count_ambiguous_renumbered(p, replayed, "spool_replay");
  }
  observer_.on_epoch_bump(new_id && !new_id_required_ ? "new_producer_id" : reason_);
  rewrite_set_.clear();
  new_id_required_ = false;
  requested_ = false;
  reason_.clear();
}

void EpochBumper::count_ambiguous_renumbered(const PartitionState& p, std::int64_t batches, std::string_view reason) {
  spdlog::warn(
      "{}: {} batch(es) that may already be in the log renumbered ({}): the broker cannot deduplicate "
      "them, so their records may be written twice",
      p.tp().to_string(), batches, reason);
  observer_.on_ambiguous_renumbered(reason, batches);
}

}  // namespace pp
