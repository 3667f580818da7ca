// The pipeline's BatchJournal over the spool's writer (docs/design/SPOOL.md,
// "Entries"): each call becomes one entry, a Sequenced, Resolved or
// Identity entry, and the pipeline's JournalId is the spool's EntryId. A
// Sequenced entry is reported durable only once its group commit is; the
// other entries are fire and forget, as the interface allows (a resolution
// lost to a crash only makes its batch be replayed, which the broker
// deduplicates).
//
// Loop thread only (the writer's). Callbacks run later on the loop, never
// inside the call: a refusal (the writer closed) is deferred.
#pragma once

#include <uv.h>

#include <functional>

#include "proxy/net/deferred.h"
#include "proxy/pipeline/batch_journal.h"
#include "proxy/spool/spool_writer.h"

namespace pp::durable {

class SpoolJournal final : public BatchJournal {
 public:
  // `writer` must outlive the journal.
  SpoolJournal(uv_loop_t* loop, spool::SpoolWriter& writer);

  void sequenced(const JournalBatch& batch, std::function<void(JournalId)> done) override;
  void resolved(JournalId batch, JournalOutcome outcome, ErrorCode error, std::int64_t base_offset) override;
  void records_failed(JournalRange records, ErrorCode error) override;
  void identity(ProducerId producer_id, ProducerEpoch producer_epoch) override;

 private:
  // Fire and forget: a failure is the writer's to log.
  void append_quietly(const spool::EntryBody& body);

  spool::SpoolWriter& writer_;
  net::Deferred later_;
};

}  // namespace pp::durable
