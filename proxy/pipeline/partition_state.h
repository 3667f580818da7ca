// Per-partition sequence and window state of the idempotent producer
// (docs/design/PIPELINE.md, "Per-partition state"), and the draining rules
// that only need this state (PIPELINE.md, "Draining rules").
// Pure: no sockets, no clock reads; the producer passes `now` in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/protocol/types.h"

namespace pp {

// Why a partition may not start a new batch now (PIPELINE.md, "New head":
// the holds), for logs and tests.
enum class HoldReason : std::uint8_t {
  kNone,
  kStaleEpochUnacked,  // stale epoch: batches of an older pid/epoch still unacked
  kUnresolved,         // unresolved: an expired batch may or may not be in the log
  kFirstUnacked,       // the first-ack rule: this epoch's first batch is not acked (apache/kafka PR #23853)
  kWindowCount,        // the count check of KIP-1269
  kWindowSpan,         // the span check: from the oldest unacked batch (KAFKA-18905)
  kOneAtATime,         // one at a time: a new leader or a retry is out and not yet acked
};
std::string_view to_string(HoldReason reason);

struct ProducerIdAndEpoch {
  ProducerId id = kNoProducerId;
  ProducerEpoch epoch = kNoProducerEpoch;
  auto operator<=>(const ProducerIdAndEpoch&) const = default;
};

// What must outlive a retired idle partition's state (IdempotentProducer::
// retire_idle_partitions) so that its next batch continues the sequence
// under the same pid/epoch: a restart at 0 would be OUT_OF_ORDER_SEQUENCE to
// a broker that still holds this producer's state for the partition.
struct SequenceMemo {
  ProducerIdAndEpoch owner;
  std::int32_t next_sequence = 0;
  std::int32_t last_acked_sequence = -1;
  std::uint64_t next_ordinal = 0;
  bool first_unacked = false;
  Uuid log_id;  // the topic id the sequence ran under (zero: unknown)
};

class PartitionState {
 public:
  explicit PartitionState(TopicPartition tp) : tp_(std::move(tp)) {}

  const TopicPartition& tp() const { return tp_; }

  // ---- runs waiting to be batched (the accumulator's queue) ----
  std::deque<std::shared_ptr<RunTracker>>& queued_runs() { return queued_; }
  const std::deque<std::shared_ptr<RunTracker>>& queued_runs() const { return queued_; }
  std::size_t queued_estimate_bytes() const { return queued_estimate_bytes_; }
  void add_queued_estimate(std::int64_t delta) {
    queued_estimate_bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(queued_estimate_bytes_) + delta);
  }
  // The queued runs that have an origin, by origin, each list in queue
  // order: what RecordSink::withdraw takes back with a withdrawn run. The
  // accumulator keeps it in step with the queue (it does not own the runs;
  // the queue does).
  using OriginQueues = std::unordered_map<std::uint64_t, std::deque<RunTracker*>>;
  OriginQueues& queued_by_origin() { return queued_by_origin_; }
  const OriginQueues& queued_by_origin() const { return queued_by_origin_; }

  // ---- sequence state ----
  const ProducerIdAndEpoch& sequence_owner() const { return owner_; }
  std::int32_t next_sequence() const { return next_seq_; }
  std::int32_t last_acked_sequence() const { return last_acked_seq_; }
  const std::deque<BatchPtr>& unacked() const { return unacked_; }
  bool first_unacked() const { return first_unacked_; }
  std::uint64_t next_ordinal() const { return next_ord_; }
  const std::optional<std::int32_t>& unresolved_next() const { return unresolved_next_; }

  // ---- the log the sequence runs in (KAFKA-15591) ----
  // The topic id of the partition's log this sequence state belongs to (zero
  // while unknown). A different id means the topic was deleted and created
  // again: a new, empty log holding no state for this producer.
  const Uuid& log_id() const { return log_id_; }
  void set_log_id(const Uuid& id) { log_id_ = id; }
  // The sequence now runs into a new log (`id`): nothing of it is acknowledged there.
  void log_replaced(const Uuid& id) {
    log_id_ = id;
    acked_in_log_ = false;
  }
  // An answer from this partition acknowledged a batch since this state was
  // created, resumed from a memo, or its log was replaced. Until then a broker
  // may hold no state for the producer here, and a non-zero first sequence is
  // refused by a broker with KAFKA-15591's rule.
  bool acked_in_log() const { return acked_in_log_; }

  // The holds on a new head under `current` (PIPELINE.md, "New head").
  HoldReason new_batch_hold(const ProducerIdAndEpoch& current) const;
  // The retry head: the lowest unacked batch, if it waits for a retry. A retry
  // goes only when it is the first in flight for its partition.
  BatchPtr retry_head() const;
  bool has_awaiting_retry() const;
  // The new batch built and held for its journal entry (BatchState::kUnsent):
  // always the last of unacked, since nothing new is built behind it.
  BatchPtr unsent_batch() const {
    return !unacked_.empty() && unacked_.back()->state == BatchState::kUnsent ? unacked_.back() : nullptr;
  }
  // The holds that may have arisen since that batch was built (one at a
  // time, the count check); the others it passed when its sequence was given.
  HoldReason unsent_hold() const;
  // A sequenced() of some unacked batch is outstanding: no batch's form may
  // change (BatchJournaling).
  bool journal_pending() const {
    return std::any_of(unacked_.begin(), unacked_.end(), [](const BatchPtr& b) { return b->journal_pending; });
  }
  // Restore: takes a batch a previous process sequenced, in sequence order,
  // as the partition's next unacked one: its owner, next sequence and
  // ordinal follow it, and the sequence before the first is taken as acked.
  void restore(const BatchPtr& batch);

  // The lazy reset: an idle partition whose sequences ran under an older
  // pid/epoch starts over at 0 (KAFKA-12152).
  bool needs_reset(const ProducerIdAndEpoch& current) const { return owner_ != current; }
  void reset_sequences(const ProducerIdAndEpoch& current);

  // Sequences at first send: gives `batch` its sequence and ordinal and takes
  // it into unacked.
  void assign(const BatchPtr& batch);

  // NONE (or DUPLICATE_SEQUENCE_NUMBER): the batch is in the log.
  void acknowledge(const BatchPtr& batch);
  // The batch ends without success; it leaves unacked.
  void forget(const BatchPtr& batch);
  // A sent batch given up on ("Delivery timeout and unresolved sequences",
  // PIPELINE.md): later sequences are unresolved until unacked drains (then
  // resolved, or an epoch bump).
  void mark_unresolved(const BatchPtr& batch);
  void clear_unresolved() { unresolved_next_.reset(); }
  // The renumbering of an epoch bump ("Epoch bump", PIPELINE.md): every
  // unacked batch from 0 under `next`. Returns how many were re-stamped;
  // their bytes must be patched by the caller.
  std::size_t renumber(const ProducerIdAndEpoch& next);
  // A split, an isolation or a bisection: `original` was replaced in unacked
  // by `pieces` (same first sequence).
  void replace_with_split(const BatchPtr& original, const std::vector<BatchPtr>& pieces);
  // Withdrawal from refused batches: unacked from index `first` on is
  // replaced by `rebuilt` (possibly none), whose sequences and ordinals run
  // on from the old unacked[first]'s; the next sequence follows the last.
  void replace_tail(std::size_t first, const std::vector<BatchPtr>& rebuilt);
  // The topic's Metadata answer count (TopicTable::answers) when runs were
  // first queued for this partition while the answers did not name it: it
  // fails them only once later answers still do not (a partition just added
  // may not be known to every broker yet). Cleared when the partition is known.
  const std::optional<std::uint64_t>& unknown_since_answer() const { return unknown_since_answer_; }
  void set_unknown_since_answer(std::optional<std::uint64_t> answer) { unknown_since_answer_ = answer; }
  // Runs were withdrawn from batches of this partition that are not in the
  // log: nothing of it is sent until those batches are rebuilt without them.
  bool rebuild_pending() const { return rebuild_pending_; }
  void set_rebuild_pending(bool pending) { rebuild_pending_ = pending; }

  // ---- window (KIP-1269) ----
  std::int32_t window() const { return window_; }
  void set_window(std::int32_t w) { window_ = w; }

  // ---- leadership ("Leader change", PIPELINE.md) ----
  std::int32_t leader_id() const { return leader_id_; }
  std::int32_t leader_epoch() const { return leader_epoch_; }
  bool draining() const { return draining_; }
  void set_leader(std::int32_t id, std::int32_t epoch) {
    leader_id_ = id;
    leader_epoch_ = epoch;
  }
  void set_draining(bool d) { draining_ = d; }
  // One at a time: a new leader takes one batch until it has acked one.
  bool leader_unconfirmed() const { return leader_unconfirmed_; }
  void set_leader_unconfirmed(bool u) { leader_unconfirmed_ = u; }

  // Batches of this partition inside outstanding requests.
  std::int32_t inflight_batches() const { return inflight_batches_; }
  void batch_sent() { ++inflight_batches_; }
  void batch_returned() { --inflight_batches_; }

  bool idle() const { return queued_.empty() && unacked_.empty(); }

  // ---- idle retirement ----
  std::int64_t last_used_ms() const { return last_used_ms_; }
  void touch(std::int64_t now) { last_used_ms_ = std::max(last_used_ms_, now); }

  // The topic's max.message.bytes as the upstream reported it (0: unknown):
  // a batch built over it would only be refused MESSAGE_TOO_LARGE and halved.
  std::size_t batch_limit_bytes() const { return batch_limit_bytes_; }
  void set_batch_limit_bytes(std::size_t bytes) { batch_limit_bytes_ = bytes; }
  // Nothing queued, in flight, unresolved or draining: only the sequence is
  // left, and the memo keeps it. The window is not kept: the leader may
  // change while the partition is retired, and a new leader starts at 5.
  bool retirable() const {
    return idle() && inflight_batches_ == 0 && !unresolved_next_ && !draining_ && !rebuild_pending_;
  }
  SequenceMemo sequence_memo() const {
    return {owner_, next_seq_, last_acked_seq_, next_ord_, first_unacked_, log_id_};
  }
  void resume(const SequenceMemo& memo);

 private:
  TopicPartition tp_;
  std::deque<std::shared_ptr<RunTracker>> queued_;
  std::size_t queued_estimate_bytes_ = 0;
  OriginQueues queued_by_origin_;

  ProducerIdAndEpoch owner_;
  std::int32_t next_seq_ = 0;
  std::int32_t last_acked_seq_ = -1;
  std::deque<BatchPtr> unacked_;  // ordered by (pid, epoch, base sequence)
  std::optional<std::int32_t> unresolved_next_;
  bool first_unacked_ = false;
  std::uint64_t next_ord_ = 0;
  Uuid log_id_;
  bool acked_in_log_ = false;

  std::int32_t window_ = kInitialWindow;
  std::int32_t leader_id_ = -1;
  std::int32_t leader_epoch_ = -1;
  bool draining_ = false;
  bool leader_unconfirmed_ = false;
  bool rebuild_pending_ = false;
  std::optional<std::uint64_t> unknown_since_answer_;
  std::int32_t inflight_batches_ = 0;
  std::int64_t last_used_ms_ = 0;
  std::size_t batch_limit_bytes_ = 0;
};

}  // namespace pp
