// What a restarted proxy owes from its spool, rebuilt for the pipeline
// (docs/design/SPOOL.md, "Replay order"): every unresolved batch, with
// exactly the producer id, epoch, base sequence and records it was journaled
// with, each run read back from its Records entry; then the records no batch
// had taken, in append order, for the SpoolFeeder. The caller hands the
// batches to IdempotentProducer::restore() before its first poll and pushes
// the rest to the feeder, so each partition sends its unresolved batches
// first, in sequence order, and new records after them.
//
// Blocking reads (read_entry): call it at start-up, before the loop serves.
// A batch whose records cannot be read back is left out and named in
// `problems`; it stays unresolved in the spool.
#pragma once

#include <string>
#include <vector>

#include "proxy/durable/spool_feeder.h"
#include "proxy/pipeline/restored_batch.h"
#include "proxy/spool/spool_writer.h"

namespace pp::durable {

struct ReplayPlan {
  std::vector<RestoredBatch> batches;  // in sequencing order
  std::vector<FeedItem> unsequenced;   // in append order
  std::int64_t records = 0;            // in both
  std::vector<std::string> problems;
};

ReplayPlan plan_replay(const spool::SpoolWriter& writer);

}  // namespace pp::durable
