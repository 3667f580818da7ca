#include "proxy/pipeline/partition_state.h"

#include <algorithm>

namespace pp {

std::string_view to_string(HoldReason reason) {
  switch (reason) {
    case HoldReason::kNone:
      return "none";
    case HoldReason::kStaleEpochUnacked:
      return "unacked batches of an older epoch";
    case HoldReason::kUnresolved:
      return "unresolved sequence";
    case HoldReason::kFirstUnacked:
      return "first batch of the epoch not acknowledged";
    case HoldReason::kWindowCount:
      return "window full (count)";
    case HoldReason::kWindowSpan:
      return "window full (span from oldest unacked)";
    case HoldReason::kOneAtATime:
      return "one at a time (a new leader or a retry is not acked yet)";
  }
  return "?";
}

HoldReason PartitionState::new_batch_hold(const ProducerIdAndEpoch& current) const {
  bool retry_out = false;
  for (const auto& b : unacked_) {
    if (ProducerIdAndEpoch{b->producer_id, b->producer_epoch} != current) {
      return HoldReason::kStaleEpochUnacked;
    }
    retry_out = retry_out || b->attempts > 1;
  }
  if (unresolved_next_) return HoldReason::kUnresolved;
  // A batch sent behind one that a not-yet-leader refuses lands as
  // OUT_OF_ORDER_SEQUENCE once that broker takes over: seen against Kafka
  // 4.4.0 when leaders move. Until the new leader or the retry has acked,
  // the partition keeps a single batch out.
  if (inflight_batches_ > 0 && (leader_unconfirmed_ || retry_out)) return HoldReason::kOneAtATime;
  // The sequence-0 batch has been sent (an ordinal was used) and not acked:
  // until the broker holds it, a later sequence could land first on a
  // partition with no state and orphan it (KAFKA-14359, PR #23853).
  if (first_unacked_ && next_ord_ > 0 && owner_ == current) return HoldReason::kFirstUnacked;
  if (inflight_batches_ >= window_) return HoldReason::kWindowCount;
  if (!unacked_.empty() && owner_ == current &&
      next_ord_ - unacked_.front()->ordinal + 1 > static_cast<std::uint64_t>(window_)) {
    return HoldReason::kWindowSpan;
  }
  return HoldReason::kNone;
}

HoldReason PartitionState::unsent_hold() const {
  bool retry_out = false;
  for (const auto& b : unacked_) retry_out = retry_out || b->attempts > 1;
  if (inflight_batches_ > 0 && (leader_unconfirmed_ || retry_out)) return HoldReason::kOneAtATime;
  if (inflight_batches_ >= window_) return HoldReason::kWindowCount;
  return HoldReason::kNone;
}

void PartitionState::restore(const BatchPtr& batch) {
  if (unacked_.empty()) {
    last_acked_seq_ = ProducerBatch::wrap_sequence(batch->base_sequence, -1);
    if (batch->base_sequence == 0) last_acked_seq_ = -1;
    first_unacked_ = batch->base_sequence == 0;
  }
  owner_ = ProducerIdAndEpoch{batch->producer_id, batch->producer_epoch};
  batch->ordinal = next_ord_++;
  next_seq_ = ProducerBatch::wrap_sequence(batch->base_sequence, batch->record_count);
  unacked_.push_back(batch);
}

BatchPtr PartitionState::retry_head() const {
  if (unacked_.empty()) return nullptr;
  const BatchPtr& front = unacked_.front();
  return front->state == BatchState::kAwaitingRetry ? front : nullptr;
}

bool PartitionState::has_awaiting_retry() const {
  return std::any_of(unacked_.begin(), unacked_.end(),
                     [](const BatchPtr& b) { return b->state == BatchState::kAwaitingRetry; });
}

void PartitionState::resume(const SequenceMemo& memo) {
  owner_ = memo.owner;
  next_seq_ = memo.next_sequence;
  last_acked_seq_ = memo.last_acked_sequence;
  next_ord_ = memo.next_ordinal;
  first_unacked_ = memo.first_unacked;
  log_id_ = memo.log_id;
}

void PartitionState::reset_sequences(const ProducerIdAndEpoch& current) {
  owner_ = current;
  next_seq_ = 0;
  last_acked_seq_ = -1;
  next_ord_ = 0;
  first_unacked_ = true;
  unresolved_next_.reset();
}

void PartitionState::assign(const BatchPtr& batch) {
  batch->producer_id = owner_.id;
  batch->producer_epoch = owner_.epoch;
  batch->base_sequence = next_seq_;
  batch->ordinal = next_ord_++;
  next_seq_ = ProducerBatch::wrap_sequence(next_seq_, batch->record_count);
  unacked_.push_back(batch);
}

void PartitionState::acknowledge(const BatchPtr& batch) {
  if (ProducerIdAndEpoch{batch->producer_id, batch->producer_epoch} == owner_) {
    last_acked_seq_ = batch->last_sequence();
    if (batch->ordinal == 0) first_unacked_ = false;
  }
  acked_in_log_ = true;
  forget(batch);
}

void PartitionState::forget(const BatchPtr& batch) {
  auto it = std::find(unacked_.begin(), unacked_.end(), batch);
  if (it != unacked_.end()) unacked_.erase(it);
}

void PartitionState::mark_unresolved(const BatchPtr& batch) {
  const std::int32_t after = ProducerBatch::wrap_sequence(batch->last_sequence(), 1);
  if (!unresolved_next_ || after > *unresolved_next_) unresolved_next_ = after;
  forget(batch);
}

std::size_t PartitionState::renumber(const ProducerIdAndEpoch& next) {
  owner_ = next;
  next_seq_ = 0;
  next_ord_ = 0;
  last_acked_seq_ = -1;
  unresolved_next_.reset();
  first_unacked_ = true;
  for (const auto& b : unacked_) {
    b->producer_id = next.id;
    b->producer_epoch = next.epoch;
    b->base_sequence = next_seq_;
    b->ordinal = next_ord_++;
    b->renumbered = true;
    next_seq_ = ProducerBatch::wrap_sequence(next_seq_, b->record_count);
  }
  return unacked_.size();
}

void PartitionState::replace_with_split(const BatchPtr& original, const std::vector<BatchPtr>& pieces) {
  auto it = std::find(unacked_.begin(), unacked_.end(), original);
  if (it == unacked_.end() || pieces.empty()) return;
  const std::uint64_t extra = pieces.size() - 1;
  for (auto later = it + 1; later != unacked_.end(); ++later) (*later)->ordinal += extra;
  next_ord_ += extra;
  std::int32_t seq = original->base_sequence;
  std::uint64_t ord = original->ordinal;
  for (const auto& p : pieces) {
    p->producer_id = original->producer_id;
    p->producer_epoch = original->producer_epoch;
    p->base_sequence = seq;
    p->ordinal = ord++;
    seq = ProducerBatch::wrap_sequence(seq, p->record_count);
  }
  it = unacked_.erase(it);
  unacked_.insert(it, pieces.begin(), pieces.end());
}

void PartitionState::replace_tail(std::size_t first, const std::vector<BatchPtr>& rebuilt) {
  if (first >= unacked_.size()) return;
  std::int32_t seq = unacked_[first]->base_sequence;
  std::uint64_t ord = unacked_[first]->ordinal;
  unacked_.erase(unacked_.begin() + static_cast<std::ptrdiff_t>(first), unacked_.end());
  for (const auto& b : rebuilt) {
    b->base_sequence = seq;
    b->ordinal = ord++;
    seq = ProducerBatch::wrap_sequence(seq, b->record_count);
    unacked_.push_back(b);
  }
  next_seq_ = seq;
  next_ord_ = ord;
}

}  // namespace pp
