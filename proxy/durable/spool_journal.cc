#include "proxy/durable/spool_journal.h"

#include <memory>
#include <utility>

namespace pp::durable {

SpoolJournal::SpoolJournal(uv_loop_t* loop, spool::SpoolWriter& writer) : writer_(writer), later_(loop) {}

void SpoolJournal::sequenced(const JournalBatch& batch, std::function<void(JournalId)> done) {
  spool::SequencedEntry e;
  e.topic = batch.tp.topic;
  e.partition = batch.tp.partition;
  e.producer_id = batch.producer_id.value;
  e.producer_epoch = batch.producer_epoch.value;
  e.base_sequence = batch.base_sequence;
  e.record_count = batch.record_count;
  e.supersedes = batch.supersedes;
  e.ranges.reserve(batch.ranges.size());
  for (const JournalRange& r : batch.ranges) e.ranges.push_back({r.records, r.first_record, r.record_count});
  auto shared_done = std::make_shared<std::function<void(JournalId)>>(std::move(done));
  const auto appended = writer_.append(
      e, [shared_done](int status, spool::EntryId id) { (*shared_done)(status == 0 ? id : kNoJournalId); });
  // Only a closed writer refuses a Sequenced entry (never for room): the
  // batch stays unsent.
  if (!appended) later_.post([shared_done] { (*shared_done)(kNoJournalId); });
}

void SpoolJournal::resolved(JournalId batch, JournalOutcome outcome, ErrorCode error, std::int64_t base_offset) {
  spool::ResolvedEntry e;
  e.target = batch;
  e.outcome = outcome == JournalOutcome::kAcknowledged ? spool::Outcome::kAcknowledged : spool::Outcome::kFailed;
  e.error_code = outcome == JournalOutcome::kAcknowledged ? std::int16_t{0} : static_cast<std::int16_t>(error);
  e.base_offset = outcome == JournalOutcome::kAcknowledged ? base_offset : -1;
  append_quietly(e);
}

// A Records target fails whatever of its records is not sequenced (SPOOL.md,
// "Entries"): the pipeline gives up on a copy's records only before any of
// them is in a batch, so the range is the rest of the copy.
void SpoolJournal::records_failed(JournalRange records, ErrorCode error) {
  spool::ResolvedEntry e;
  e.target = records.records;
  e.outcome = spool::Outcome::kFailed;
  e.error_code = static_cast<std::int16_t>(error);
  append_quietly(e);
}

void SpoolJournal::identity(ProducerId producer_id, ProducerEpoch producer_epoch) {
  append_quietly(spool::IdentityEntry{producer_id.value, producer_epoch.value});
}

void SpoolJournal::append_quietly(const spool::EntryBody& body) {
  static_cast<void>(writer_.append(body, [](int, spool::EntryId) {}));
}

}  // namespace pp::durable
