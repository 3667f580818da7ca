// How a sent batch ends: acknowledged (its runs get their offsets), failed
// (its runs get the error), or expired past its delivery timeout with its
// outcome unknown ("Delivery timeout and unresolved sequences",
// docs/design/PIPELINE.md). Each end leaves the partition's unacked list and
// answers the batch's pieces through the accumulator, which calls each run's
// `done` once its last piece has ended. The observer hears of the records
// before any client does, and the journal of a durable batch's end before
// its runs are answered. Loop thread only.
#pragma once

#include <cstdint>
#include <string>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/batch_journaling.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {

class BatchCompletion {
 public:
  BatchCompletion(Accumulator& accumulator, PipelineObserver& observer, PartitionMap& partitions,
                  BatchJournaling& journaling)
      : accumulator_(accumulator), observer_(observer), partitions_(partitions), journaling_(journaling) {}

  // In the log at `base_offset` (-1: unknown, a duplicate of an earlier attempt).
  void complete(PartitionState& p, const BatchPtr& batch, std::int64_t base_offset,
                const ProducePartitionResponse* response);
  // It ends without success, for good: every run of it fails with `error`,
  // marked maybe_written when some attempt of it ended with an unknown
  // outcome; a durable batch is journaled as failed.
  void fail(PartitionState& p, const BatchPtr& batch, ErrorCode error, const std::string& message);
  // Past its delivery timeout after it was sent (never a durable batch): it
  // fails, its outcome unknown (the partition's later sequences are
  // unresolved), and takes the runs queued behind it with it, durable runs
  // excepted.
  void expire_sent(PartitionState& p, const BatchPtr& batch);
  // Every run not yet ended, sent or queued, in every partition, fails with
  // `error` (shutdown, a fatal producer). Nothing is journaled: durable
  // batches and runs stay owed, for the next process to replay.
  void abort_all(ErrorCode error);

 private:
  void end_failed(PartitionState& p, const BatchPtr& batch, ErrorCode error, const std::string& message);

  Accumulator& accumulator_;
  PipelineObserver& observer_;
  PartitionMap& partitions_;
  BatchJournaling& journaling_;
};

}  // namespace pp
