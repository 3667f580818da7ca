// The accumulator of the idempotent pipeline: the runs clients handed over,
// queued per partition until they fill a batch or linger out, the memory
// budget they are charged against, and the end of each run (its `done`
// called exactly once). It decides nothing about sequences or windows; the
// sender asks it for a batch when a partition may send (docs/design/PIPELINE.md,
// "Sequences at first send", "A record without a timestamp gets the receive
// time", "One record run per partition of a request").
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proxy/pipeline/batch_journaling.h"
#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/record_run.h"
#include "proxy/pipeline/record_sink.h"

namespace pp {

// What fail_queued() does with durable runs (RecordRun::durable_entry), which
// their clients were told are written already.
enum class DurableRuns : std::uint8_t {
  kGiveUp,  // a non-retriable reason: they fail too, journaled as failed
  kKeep,    // a retriable reason: they stay queued, in order
  kAbort,   // shutdown or a fatal producer: they fail unjournaled, replayed by the next process
};

class Accumulator {
 public:
  Accumulator(const PipelineConfig& config, PipelineObserver& observer, MemoryBudget& memory,
              BatchJournaling& journaling)
      : config_(config), observer_(observer), memory_(memory), journaling_(journaling) {}

  // Takes a run: stamps missing timestamps, charges its decoded records to
  // the budget (the client's frame is charged by the front end). An empty run
  // is answered on the next take_deferred(), never inside the call.
  std::shared_ptr<RunTracker> admit(RecordRun run, RunCompletion done, std::int64_t now);
  void enqueue(PartitionState& p, std::shared_ptr<RunTracker> run);
  // RecordSink::withdraw for one run: its `done` runs inside the call when
  // it is withdrawn, and so do those of its origin's runs queued behind it,
  // in queue order, right after it.
  WithdrawOutcome withdraw(RunTracker& run);
  // RefusedBatchWithdrawal's part: `run`, some of whose records are in p's
  // batches that are known not to be in the log, ends withdrawn (its `done`
  // runs inside the call); what is left of it in p's queue leaves the queue.
  // Its pieces stay in their batches until the caller rebuilds them.
  void withdraw_batched(PartitionState& p, RunTracker& run, std::string message);
  // The runs of `origin` still queued in p are withdrawn, in queue order.
  void withdraw_queued_of(PartitionState& p, std::uint64_t origin);

  bool idle() const { return runs_outstanding_ == 0; }
  bool has_deferred() const { return !deferred_finish_.empty(); }
  void finish_deferred();

  // Shutdown: send what is queued without waiting for linger.
  void flush() { flushing_ = true; }
  bool linger_done(const PartitionState& p, std::int64_t now) const;
  // The next batch of p's queued runs, built now under `id` from p's next
  // sequence. Runs stay whole unless one alone exceeds batch_bytes; durable
  // runs and others never share a batch.
  BatchPtr build_batch(PartitionState& p, const ProducerIdAndEpoch& id, std::int64_t now);

  // Runs never put into a batch and past their delivery timeout fail; a
  // durable run never expires, and the runs behind one wait with it.
  void expire_queued(PartitionState& p, std::int64_t now);
  void fail_queued(PartitionState& p, ErrorCode error, const std::string& message, DurableRuns durable);
  // A batch's pieces ended: with `success` (offsets at the batch's base) or with `error`.
  void finish_piece(const BatchPiece& piece, const RunResult* success, ErrorCode error, const std::string& message);

 private:
  void finish_run(RunTracker& run);
  // Ends a run that never left p's queue: not appended, so its client may
  // send it again without duplicating it.
  void take_back(PartitionState& p, RunTracker& run, std::string message);
  // A run leaves p's queue from its head (batched, expired, failed): it
  // leaves its origin's list too.
  void leave_queue(PartitionState& p, RunTracker& run);
  // Drops withdrawn runs from p's queue head: the head is always a live run.
  void settle_head(PartitionState& p);
  // producer.batch_bytes, or less where the topic takes less.
  std::size_t batch_bytes_for(const PartitionState& p) const {
    return p.batch_limit_bytes() > 0 ? std::min(config_.batch_bytes, p.batch_limit_bytes()) : config_.batch_bytes;
  }

  const PipelineConfig& config_;
  PipelineObserver& observer_;
  MemoryBudget& memory_;
  BatchJournaling& journaling_;
  std::size_t runs_outstanding_ = 0;
  bool flushing_ = false;
  std::vector<std::shared_ptr<RunTracker>> deferred_finish_;
};

}  // namespace pp
