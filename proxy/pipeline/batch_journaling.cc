#include "proxy/pipeline/batch_journaling.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace pp {

bool BatchJournaling::ready_to_send(const BatchPtr& b, std::int64_t now) {
  if (journal_ == nullptr || !b->durable || !b->journal_due) return true;
  if (b->journal_pending || now < b->journal_retry_at_ms) return false;
  JournalBatch entry;
  entry.tp = b->tp;
  entry.producer_id = b->producer_id;
  entry.producer_epoch = b->producer_epoch;
  entry.base_sequence = b->base_sequence;
  entry.record_count = b->record_count;
  entry.supersedes = b->journal_id != kNoJournalId ? b->journal_id : b->journal_replaces;
  entry.ranges.reserve(b->pieces.size());
  for (const BatchPiece& piece : b->pieces) {
    entry.ranges.push_back(JournalRange{piece.run->durable_entry,
                                        piece.run->durable_first_record + static_cast<std::int32_t>(piece.first_record),
                                        static_cast<std::int32_t>(piece.record_count)});
  }
  b->journal_pending = true;
  journal_->sequenced(entry, [this, alive = alive_, weak = std::weak_ptr<ProducerBatch>(b)](JournalId id) {
    if (!*alive) return;
    // A batch gone meanwhile was aborted (shutdown, a fatal producer): its
    // entry stays unresolved and is replayed by the next process.
    if (const BatchPtr batch = weak.lock()) on_sequenced(*batch, id);
  });
  return false;
}

void BatchJournaling::on_sequenced(ProducerBatch& b, JournalId id) {
  b.journal_pending = false;
  if (id == kNoJournalId) {
    ++b.journal_failures;
    const std::int64_t backoff = retry_backoff_ms(config_, b.journal_failures - 1);
    b.journal_retry_at_ms = clock_.now_ms() + backoff;
    if (auto held_back = write_failures_.admit(static_cast<std::uint64_t>(clock_.now_ms()))) {
      spdlog::warn(
          "{}: the spool journal could not write batch seq {}..{}; it is not sent until it can "
          "(retrying in {} ms; {} more failed writes since last said)",
          b.tp.to_string(), b.base_sequence, b.last_sequence(), backoff, *held_back);
    }
  } else {
    b.journal_id = id;
    b.journal_replaces = kNoJournalId;
    b.journal_due = false;
    b.journal_failures = 0;
    b.journal_retry_at_ms = 0;
  }
  if (wakeup_) wakeup_();
}

std::int64_t BatchJournaling::send_after_journal_ms(const ProducerBatch& b, std::int64_t send_ms) const {
  if (journal_ == nullptr || !b.durable || !b.journal_due) return send_ms;
  if (b.journal_pending) return -1;
  return std::max(send_ms, b.journal_retry_at_ms);
}

void BatchJournaling::identity(const ProducerIdAndEpoch& current) {
  if (journal_ == nullptr || current.id == kNoProducerId) return;
  if (journaled_identity_ && *journaled_identity_ == current) return;
  journaled_identity_ = current;
  journal_->identity(current.id, current.epoch);
}

void BatchJournaling::acknowledged(const ProducerBatch& b, std::int64_t base_offset) {
  if (journal_ == nullptr || b.journal_id == kNoJournalId) return;
  journal_->resolved(b.journal_id, JournalOutcome::kAcknowledged, ErrorCode::kNone, base_offset);
}

void BatchJournaling::failed(const ProducerBatch& b, ErrorCode error, const std::string& reason) {
  if (journal_ == nullptr || !b.durable) return;
  spdlog::warn("{}: {} spooled records failed for good ({}: {}); their batch seq {}..{} is never sent again",
               b.tp.to_string(), b.record_count, error_name(error), reason, b.base_sequence, b.last_sequence());
  if (b.journal_id != kNoJournalId) {
    journal_->resolved(b.journal_id, JournalOutcome::kFailed, error, -1);
    return;
  }
  // Never journaled in this form: its records are given up on as records.
  for (const BatchPiece& piece : b.pieces)
    records_failed(*piece.run, piece.first_record, piece.record_count, error, {});
}

void BatchJournaling::records_failed(const RunTracker& run, std::uint32_t first, std::uint32_t count, ErrorCode error,
                                     const std::string& reason) {
  if (journal_ == nullptr || !run.durable() || count == 0) return;
  if (!reason.empty()) {
    spdlog::warn("spooled records {}..{} of entry {} failed for good before being sent ({}: {})",
                 run.durable_first_record + first, run.durable_first_record + first + count - 1, run.durable_entry,
                 error_name(error), reason);
  }
  journal_->records_failed(JournalRange{run.durable_entry, run.durable_first_record + static_cast<std::int32_t>(first),
                                        static_cast<std::int32_t>(count)},
                           error);
}

}  // namespace pp
