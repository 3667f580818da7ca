// A batch as the idempotent producer tracks it (docs/design/PIPELINE.md,
// "Per-partition state": per batch): its bytes, which slices of which client
// runs it carries, and its sequence state. Bytes are built once, at the first
// send, and resent unchanged; only an epoch bump re-stamps them (PIPELINE.md,
// "Sequences at first send").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/base/wire_frame.h"
#include "proxy/pipeline/batch_journal.h"
#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/record_run.h"
#include "proxy/pipeline/topic_partition.h"
#include "proxy/protocol/types.h"

namespace pp {

class PartitionState;

// A submitted run and how far its pieces have got.
struct RunTracker {
  RecordRun run;
  RunCompletion done;
  std::int64_t enqueued_ms = 0;
  // The partition whose queue holds it. Valid while no record of it is
  // batched and it has not finished: a partition with queued runs is never
  // retired.
  PartitionState* queued_in = nullptr;
  // The partition whose batches carry its records. Valid while a piece of it
  // is in a batch: a partition with unacknowledged batches is never retired.
  PartitionState* batched_in = nullptr;
  std::size_t encoded_size_estimate = 0;  // upper bound of its records in a batch
  std::size_t own_size_estimate = 0;      // of that, what is copied: not the values it borrows
  std::uint32_t pieces_outstanding = 0;   // batches carrying part of it, not yet ended
  std::uint32_t records_batched = 0;      // how many of its records are in batches
  bool finished = false;
  RunResult result;
  MemoryCharge charge;  // the run's decoded records, until it finishes
  // Its durable copy (RecordRun::durable_entry and durable_first_record),
  // kept past the run's release: 0 for a run without one. A durable run is
  // on disk and replayed after a restart: it never expires, is never
  // withdrawn, and fails only for a non-retriable reason.
  std::uint64_t durable_entry = 0;
  std::int32_t durable_first_record = 0;

  bool durable() const { return durable_entry != 0; }
  bool fully_batched() const { return records_batched == run.records.size(); }
  // Still in its partition's queue with nothing of it sent: it may be withdrawn.
  bool withdrawable() const { return !finished && records_batched == 0 && queued_in != nullptr && !durable(); }
};

// Records [first_record, first_record + record_count) of a run, at
// offset_in_batch within the batch.
struct BatchPiece {
  std::shared_ptr<RunTracker> run;
  std::uint32_t first_record = 0;
  std::uint32_t record_count = 0;
  std::uint32_t offset_in_batch = 0;
};

enum class BatchState : std::uint8_t {
  kInFlight,       // inside an outstanding request
  kAwaitingRetry,  // its last attempt failed retriably; it waits its turn
  kUnsent,         // built and sequenced, never sent: it waits for its journal entry
};

struct ProducerBatch {
  TopicPartition tp;
  std::vector<BatchPiece> pieces;
  // The header and whatever records were written here are its own bytes; a
  // client's v2 section it forwards is borrowed from that client's frame and
  // kept alive by it: no copy of it is made.
  WireFrame bytes;
  MemoryCharge charge;  // `bytes.own`, until the batch is gone
  std::int32_t record_count = 0;
  std::int64_t created_ms = 0;  // its oldest run's arrival: delivery timeout counts from here

  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  std::int32_t base_sequence = -1;
  std::uint64_t ordinal = 0;  // position in this partition's epoch (the span check)

  BatchState state = BatchState::kInFlight;
  std::int32_t attempts = 0;     // sends so far
  std::int64_t retry_at_ms = 0;  // backoff: not before this
  bool skip_backoff = false;     // first retry after a leader change (KIP-951)
  bool renumbered = false;       // re-stamped by an epoch bump
  bool ever_ambiguous = false;   // some attempt ended with an unknown outcome
  std::int32_t corrupt_responses = 0;
  // Bisection ("Isolating refused records", PIPELINE.md): how many more times
  // the batch this one was cut from may be halved, shared by all its parts
  // (null: never bisected).
  std::shared_ptr<std::int32_t> bisections_left;
  std::int32_t sent_to_leader_epoch = -1;  // leader epoch known when last sent (learning the window)
  std::int32_t sent_to_node = -1;

  // Journaling for the spool (BatchJournaling). A batch's runs are all
  // durable or none is (the accumulator never mixes them).
  bool durable = false;
  // Re-sent after a restart as a previous process journaled it
  // (IdempotentProducer::restore): its outcome before the restart is unknown.
  bool restored = false;
  // The journal's entry for the batch's current form, or for its last
  // journaled form while journal_due (the one the next entry supersedes).
  JournalId journal_id = kNoJournalId;
  // Rebuilt from another batch (split, isolation, bisection, withdrawal):
  // that one's entry, superseded by this batch's first.
  JournalId journal_replaces = kNoJournalId;
  bool journal_due = false;      // its current sequences are not journaled: not sent until they are
  bool journal_pending = false;  // a sequenced() of it is outstanding: its form must not change
  std::int32_t journal_failures = 0;
  std::int64_t journal_retry_at_ms = 0;

  // BaseSequence + LastOffsetDelta, wrapping past INT32_MAX to 0
  // (DefaultRecordBatch.incrementSequence).
  std::int32_t last_sequence() const { return wrap_sequence(base_sequence, record_count - 1); }

  static std::int32_t wrap_sequence(std::int32_t base, std::int32_t delta) {
    const std::int64_t sum = static_cast<std::int64_t>(base) + delta;
    return static_cast<std::int32_t>(sum > INT32_MAX ? sum - INT32_MAX - 1 : sum);
  }
};

using BatchPtr = std::shared_ptr<ProducerBatch>;

}  // namespace pp
