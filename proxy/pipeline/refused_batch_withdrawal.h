// Withdrawing a client's run whose records are already in upstream batches,
// when those batches are known not to be in the log (docs/design/PIPELINE.md,
// "Answer by the client's deadline").
//
// A partition's batch that waits for a retry after every attempt of it was
// refused with a "not appended" error (NOT_ENOUGH_REPLICAS, NOT_LEADER, an
// out-of-order refusal: never an unknown outcome such as a timeout or a
// disconnect) is not in the log, and neither is any later batch of the same
// producer id and epoch: the broker appends a sequence only after the one
// before it. While that batch is held back, a run carried by it or by a later
// batch can be withdrawn as if it had never been sent: the client is answered
// NOT_ENOUGH_REPLICAS (RunResult::withdrawn) at once, and before anything of
// the partition is sent again its batches from the first one carrying a
// withdrawn run are rebuilt without the withdrawn runs, their sequences
// running on without a gap. The rebuild waits until none of the partition's
// batches is in flight; until then the partition sends nothing.
//
// The withdrawal rule of RecordSink::withdraw holds here too: the runs of the
// same origin after the withdrawn one in that partition, batched or queued,
// are withdrawn with it, in order. Durable runs are never withdrawn; the
// batches carrying them are rebuilt with the others, and journaled again
// before they go.
//
// Owns nothing: partitions, accumulator and budget are the producer's. Loop
// thread only.
#pragma once

#include <cstddef>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/pipeline/record_sink.h"

namespace pp {

class RefusedBatchWithdrawal {
 public:
  RefusedBatchWithdrawal(const PipelineConfig& config, Accumulator& accumulator, MemoryBudget& memory)
      : config_(config), accumulator_(accumulator), memory_(memory) {}

  // `run` has records in batches (the accumulator answered kInFlight):
  // kWithdrawn when they are all held behind a refused batch as above (its
  // `done` and those of the runs withdrawn with it ran inside the call),
  // else kInFlight and nothing changes.
  WithdrawOutcome withdraw(RunTracker& run);
  // Rebuilds the partitions with withdrawn runs in their batches, nothing in
  // flight and no journal entry outstanding. Called before each drain.
  void rebuild_ready(PartitionMap& partitions);

 private:
  // The index in p's unacked of a batch at or before `index` that is known
  // not to be in the log, with every batch after it under its producer id and
  // epoch; unacked.size() when there is none.
  static std::size_t refused_barrier(const PartitionState& p, std::size_t index);
  void rebuild(PartitionState& p);

  const PipelineConfig& config_;
  Accumulator& accumulator_;
  MemoryBudget& memory_;
};

}  // namespace pp
