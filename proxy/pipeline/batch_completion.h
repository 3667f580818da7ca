// How a sent batch ends: acknowledged (its runs get their offsets), failed
// (its runs get the error), or expired past its delivery timeout with its
// outcome unknown ("Delivery timeout and unresolved sequences",
// docs/design/PIPELINE.md). Each end leaves the partition's unacked list and
// answers the batch's pieces through the accumulator, which calls each run's
// `done` once its last piece has ended. The observer hears of the records
// before any client does. Loop thread only.
#pragma once

#include <cstdint>
#include <string>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {

class BatchCompletion {
 public:
  BatchCompletion(Accumulator& accumulator, PipelineObserver& observer, PartitionMap& partitions)
      : accumulator_(accumulator), observer_(observer), partitions_(partitions) {}

  // In the log at `base_offset` (-1: unknown, a duplicate of an earlier attempt).
  void complete(PartitionState& p, const BatchPtr& batch, std::int64_t base_offset,
                const ProducePartitionResponse* response);
  // It ends without success: every run of it fails with `error`, marked
  // maybe_written when some attempt of it ended with an unknown outcome.
  void fail(PartitionState& p, const BatchPtr& batch, ErrorCode error, const std::string& message);
  // Past its delivery timeout after it was sent: it fails, its outcome
  // unknown (the partition's later sequences are unresolved), and takes the
  // runs queued behind it with it.
  void expire_sent(PartitionState& p, const BatchPtr& batch);
  // Every run not yet ended, sent or queued, in every partition, fails with `error`.
  void abort_all(ErrorCode error);

 private:
  Accumulator& accumulator_;
  PipelineObserver& observer_;
  PartitionMap& partitions_;
};

}  // namespace pp
