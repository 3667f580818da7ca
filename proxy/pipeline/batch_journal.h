// Where the pipeline writes down, durably, what it does with records that
// are already durable somewhere (the spool, docs/design/SPOOL.md): each
// batch's sequence assignment before the batch is first sent, how each such
// batch ended, and the producer identity it sent under. With these a
// restarted proxy re-sends what was unresolved with exactly its first
// identity and sequences, so the broker deduplicates what it already has
// (SPOOL.md, "Why replay is exactly once").
//
// The pipeline defines the interface and knows nothing of how it is stored;
// the daemon implements it over the spool's writer. Only runs that carry a
// durable copy (RecordRun::durable_entry != 0) are journaled; a pipeline
// without a journal, or a batch with no such run, is never held for one.
//
// Loop thread only. Callbacks run later on the loop, never inside the call.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "proxy/pipeline/topic_partition.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/types.h"

namespace pp {

// The journal's id of an entry it wrote; 0: none.
using JournalId = std::uint64_t;
inline constexpr JournalId kNoJournalId = 0;

// Records [first_record, first_record + record_count) of the durable copy
// `records` (a RecordRun's durable_entry; first_record counts from that
// copy's first record, not from the run's).
struct JournalRange {
  JournalId records = kNoJournalId;
  std::int32_t first_record = 0;
  std::int32_t record_count = 0;
};

// A batch's identity as it is about to be sent for the first time under it.
struct JournalBatch {
  TopicPartition tp;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  std::int32_t base_sequence = 0;
  std::int32_t record_count = 0;
  // The entry of the batch this one replaces with other sequences or
  // boundaries (renumbered by an epoch bump, split, isolated, bisected);
  // kNoJournalId for a batch built from queued runs.
  JournalId supersedes = kNoJournalId;
  // Exactly the records the batch carries, in order; counts add up to
  // record_count.
  std::vector<JournalRange> ranges;
};

enum class JournalOutcome : std::uint8_t {
  kAcknowledged,  // the upstream acknowledged the batch
  kFailed,        // given up: never to be sent again
};

class BatchJournal {
 public:
  virtual ~BatchJournal() = default;

  // Writes `batch` down. `done(id)` runs once it is durable, with its id
  // (> 0), or with kNoJournalId when it could not be made durable (a disk
  // error): the batch must not be sent until a later attempt succeeds.
  virtual void sequenced(const JournalBatch& batch, std::function<void(JournalId)> done) = 0;

  // How the batch written as `batch` ended. Fire and forget: a resolution
  // lost to a crash only makes the batch be replayed, which the broker
  // deduplicates.
  virtual void resolved(JournalId batch, JournalOutcome outcome, ErrorCode error, std::int64_t base_offset) = 0;

  // Durable records the pipeline gave up on before any of them was in a
  // batch (a non-retriable error for their partition): records
  // [first_record, first_record + record_count) of copy `records`. Fire and
  // forget, like resolved().
  virtual void records_failed(JournalRange records, ErrorCode error) = 0;

  // The producer identity the pipeline now sends under (first held, epoch
  // bumped, new producer id). Written before any later sequenced().
  virtual void identity(ProducerId producer_id, ProducerEpoch producer_epoch) = 0;
};

}  // namespace pp
