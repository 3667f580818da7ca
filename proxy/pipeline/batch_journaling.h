// The pipeline's side of journaling for the spool (docs/design/PIPELINE.md,
// "Journaling for the spool"): it writes a batch carrying durable runs to the
// BatchJournal before the batch may be sent under its sequences, writes the
// batch's end, durable records given up on before they were batched, and
// every producer identity before a batch sequenced under it.
//
// A batch's journal state lives in the batch (ProducerBatch: journal_id,
// journal_due, journal_pending); this class starts sequenced() for it and
// takes the answer. The invariant the other parts keep: a batch's sequences
// and boundaries change only while no sequenced() of it is outstanding
// (EpochBumper and RefusedBatchWithdrawal wait for journal_pending to
// clear, as they wait for batches in flight), so an id that comes back
// always names the batch's current form.
//
// Without a journal (the default) every call is a no-op and no batch is
// ever held. Loop thread only; the journal's callbacks run later on the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "proxy/base/log_limiter.h"
#include "proxy/pipeline/batch_journal.h"
#include "proxy/pipeline/clock.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/producer_batch.h"

namespace pp {

class BatchJournaling {
 public:
  BatchJournaling(const PipelineConfig& config, const Clock& clock) : config_(config), clock_(clock) {}
  ~BatchJournaling() { *alive_ = false; }
  BatchJournaling(const BatchJournaling&) = delete;
  BatchJournaling& operator=(const BatchJournaling&) = delete;

  void set_journal(BatchJournal* journal) { journal_ = journal; }
  // Runs when a sequenced() answer makes a held batch sendable (or due again).
  void set_wakeup(std::function<void()> wakeup) { wakeup_ = std::move(wakeup); }
  bool active() const { return journal_ != nullptr; }

  // Whether `b` may be sent now as it stands: it carries no durable run, there
  // is no journal, or its current sequences are journaled. Otherwise it starts
  // writing them (once at a time, after the retry backoff of a failed write)
  // and answers false; the batch stays where it is.
  bool ready_to_send(const BatchPtr& b, std::int64_t now);
  // When `b`, which could otherwise go at `send_ms`, may go as far as its
  // journal entry is concerned: `send_ms` when none is needed, the later of
  // it and the next write's backoff when one is, -1 while a write is
  // outstanding (its answer wakes the producer).
  std::int64_t send_after_journal_ms(const ProducerBatch& b, std::int64_t send_ms) const;

  // The identity batches are now sequenced under; journaled when it differs
  // from the last one journaled (or restored), before any later sequenced().
  void identity(const ProducerIdAndEpoch& current);
  // The identity restored batches carry: already in the journal.
  void restored_identity(const ProducerIdAndEpoch& id) { journaled_identity_ = id; }

  // A journaled batch ended: acknowledged at `base_offset` (-1 for a
  // duplicate), or failed for good with `error`.
  void acknowledged(const ProducerBatch& b, std::int64_t base_offset);
  void failed(const ProducerBatch& b, ErrorCode error, const std::string& reason);
  // Records [first, first + count) of a durable run given up on for good
  // without being in a batch that will be resolved.
  void records_failed(const RunTracker& run, std::uint32_t first, std::uint32_t count, ErrorCode error,
                      const std::string& reason);

 private:
  void on_sequenced(ProducerBatch& b, JournalId id);

  const PipelineConfig& config_;
  const Clock& clock_;
  BatchJournal* journal_ = nullptr;
  std::function<void()> wakeup_;
  std::optional<ProducerIdAndEpoch> journaled_identity_;
  LogLimiter write_failures_{std::chrono::seconds(10)};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pp
