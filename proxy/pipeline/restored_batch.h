// A batch that was sequenced, journaled and not resolved when the proxy last
// stopped (docs/design/SPOOL.md, "Replay order"), handed back to the
// pipeline before its first poll by IdempotentProducer::restore(). It is
// re-sent with exactly the identity and sequences it was journaled with, so
// a broker that already has it answers it as a duplicate (SPOOL.md, "Why
// replay is exactly once").
#pragma once

#include <cstdint>
#include <vector>

#include "proxy/pipeline/batch_journal.h"
#include "proxy/pipeline/record_run.h"
#include "proxy/pipeline/topic_partition.h"
#include "proxy/protocol/types.h"

namespace pp {

// One run of a restored batch: its records (with durable_entry and
// durable_first_record set, as its journal range says) and how to report
// its end.
struct RestoredRun {
  RecordRun run;
  RunCompletion done;
};

struct RestoredBatch {
  TopicPartition tp;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  std::int32_t base_sequence = 0;
  std::int32_t record_count = 0;  // equals the runs' records, in order
  JournalId journal_id = kNoJournalId;
  std::vector<RestoredRun> runs;
};

}  // namespace pp
