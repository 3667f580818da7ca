#include "proxy/pipeline/refused_batch_withdrawal.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "proxy/pipeline/batch_rebuild.h"

namespace pp {
namespace {

bool carries(const ProducerBatch& b, const RunTracker* run) {
  return std::any_of(b.pieces.begin(), b.pieces.end(),
                     [run](const BatchPiece& piece) { return piece.run.get() == run; });
}

bool carries_withdrawn(const ProducerBatch& b) {
  return std::any_of(b.pieces.begin(), b.pieces.end(), [](const BatchPiece& piece) { return piece.run->finished; });
}

}  // namespace

std::size_t RefusedBatchWithdrawal::refused_barrier(const PartitionState& p, std::size_t index) {
  const auto& unacked = p.unacked();
  if (index >= unacked.size()) return unacked.size();
  const ProducerBatch& last = *unacked.back();
  // From the back: the barrier's producer id and epoch must reach the end.
  std::size_t same_owner_from = unacked.size();
  while (same_owner_from > 0) {
    const ProducerBatch& b = *unacked[same_owner_from - 1];
    if (b.producer_id != last.producer_id || b.producer_epoch != last.producer_epoch) break;
    --same_owner_from;
  }
  for (std::size_t i = same_owner_from; i <= index; ++i) {
    const ProducerBatch& b = *unacked[i];
    if (b.state == BatchState::kAwaitingRetry && b.attempts > 0 && !b.ever_ambiguous) return i;
  }
  return unacked.size();
}

WithdrawOutcome RefusedBatchWithdrawal::withdraw(RunTracker& run) {
  if (run.finished) return WithdrawOutcome::kEnded;
  if (run.durable()) return WithdrawOutcome::kInFlight;  // acknowledged from the spool already
  PartitionState* p = run.batched_in;
  if (p == nullptr || run.pieces_outstanding == 0) return WithdrawOutcome::kInFlight;
  const auto& unacked = p->unacked();
  const auto first = static_cast<std::size_t>(
      std::find_if(unacked.begin(), unacked.end(), [&run](const BatchPtr& b) { return carries(*b, &run); }) -
      unacked.begin());
  // Every record of it sent so far must still wait in those batches: a piece
  // already acknowledged, or failed, cannot be taken back.
  std::size_t waiting = 0;
  for (std::size_t i = first; i < unacked.size(); ++i) {
    for (const BatchPiece& piece : unacked[i]->pieces) waiting += piece.run.get() == &run ? piece.record_count : 0;
  }
  if (waiting != run.records_batched || refused_barrier(*p, first) == unacked.size()) return WithdrawOutcome::kInFlight;

  // It and its origin's runs after it in this partition's batches, in order.
  const std::uint64_t origin = run.run.origin;
  std::vector<RunTracker*> runs{&run};
  for (std::size_t i = first; origin != 0 && i < unacked.size(); ++i) {
    for (const BatchPiece& piece : unacked[i]->pieces) {
      RunTracker* other = piece.run.get();
      if (other->finished || other->run.origin != origin || other->durable()) continue;
      if (std::find(runs.begin(), runs.end(), other) == runs.end()) runs.push_back(other);
    }
  }
  p->set_rebuild_pending(true);
  accumulator_.withdraw_batched(*p, run,
                                "withdrawn at the client's deadline: its upstream batch was refused, not appended, and "
                                "it is not sent again");
  for (std::size_t i = 1; i < runs.size(); ++i) {
    accumulator_.withdraw_batched(*p, *runs[i],
                                  "withdrawn with an earlier request of its connection to this partition, at that "
                                  "one's deadline");
  }
  accumulator_.withdraw_queued_of(*p, origin);
  spdlog::debug("{}: {} runs withdrawn from batches refused upstream; they are rebuilt before the next send",
                p->tp().to_string(), runs.size());
  return WithdrawOutcome::kWithdrawn;
}

void RefusedBatchWithdrawal::rebuild_ready(PartitionMap& partitions) {
  for (auto& [tp, p] : partitions) {
    if (p->rebuild_pending() && p->inflight_batches() == 0 && !p->journal_pending()) rebuild(*p);
  }
}

void RefusedBatchWithdrawal::rebuild(PartitionState& p) {
  p.set_rebuild_pending(false);
  const std::vector<BatchPtr> unacked(p.unacked().begin(), p.unacked().end());
  const auto first = static_cast<std::size_t>(
      std::find_if(unacked.begin(), unacked.end(), [](const BatchPtr& b) { return carries_withdrawn(*b); }) -
      unacked.begin());
  if (first == unacked.size()) return;  // they ended meanwhile (expired, aborted)
  std::vector<BatchPtr> rebuilt;
  std::int32_t sequence = unacked[first]->base_sequence;
  std::size_t dropped_records = 0;
  for (std::size_t i = first; i < unacked.size(); ++i) {
    const ProducerBatch& old = *unacked[i];
    std::vector<BatchPiece> kept;
    for (const BatchPiece& piece : old.pieces) {
      if (piece.run->finished) {
        dropped_records += piece.record_count;
      } else {
        kept.push_back(piece);
      }
    }
    for (const BatchPiece& piece : old.pieces) --piece.run->pieces_outstanding;
    if (kept.empty()) continue;
    BatchPtr batch = rebuild_batch(old, kept, sequence, config_.compression, memory_);
    // Not in the log (the barrier), and never sent with these sequences.
    batch->ever_ambiguous = false;
    sequence = ProducerBatch::wrap_sequence(sequence, batch->record_count);
    rebuilt.push_back(std::move(batch));
  }
  spdlog::debug("{}: batches from seq {} rebuilt without {} withdrawn records: {} batches, next seq {}",
                p.tp().to_string(), unacked[first]->base_sequence, dropped_records, rebuilt.size(), sequence);
  p.replace_tail(first, rebuilt);
}

}  // namespace pp
