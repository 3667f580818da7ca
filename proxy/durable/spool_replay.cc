#include "proxy/durable/spool_replay.h"

#include <map>
#include <optional>

#include "proxy/durable/durable_completion.h"
#include "proxy/durable/spooled_run.h"
#include "proxy/spool/entry_reader.h"

namespace pp::durable {

namespace {

// Reads Records entries by id; the bytes of one entry are read once however
// many batches carry ranges of it.
class EntryCache {
 public:
  explicit EntryCache(const spool::SpoolWriter& writer) : writer_(writer) {}

  std::expected<spool::LoadedEntry, std::string> load(spool::EntryId id) {
    if (auto it = loaded_.find(id); it != loaded_.end()) return copy(it->second);
    const spool::PendingRecords* owed = writer_.index().records(id);
    if (owed == nullptr) return std::unexpected("records entry " + std::to_string(id) + " is not owed any more");
    const std::string* path = writer_.segment_path(owed->location.segment);
    if (path == nullptr) return std::unexpected("records entry " + std::to_string(id) + ": its segment is gone");
    auto loaded = spool::read_entry(*path, owed->location, id);
    if (!loaded) return std::unexpected(loaded.error());
    auto [it, inserted] = loaded_.emplace(id, std::move(*loaded));
    return copy(it->second);
  }

 private:
  // A copy whose views point into its own bytes: each run keeps its own.
  static std::expected<spool::LoadedEntry, std::string> copy(const spool::LoadedEntry& from) {
    spool::LoadedEntry to;
    to.bytes = from.bytes;
    to.entry = from.entry;
    if (auto* r = std::get_if<spool::RecordsEntry>(&to.entry.body)) {
      const auto* old = std::get_if<spool::RecordsEntry>(&from.entry.body);
      r->batch = ByteView(to.bytes.data() + (old->batch.data() - from.bytes.data()), old->batch.size());
    }
    return to;
  }

  const spool::SpoolWriter& writer_;
  std::map<spool::EntryId, spool::LoadedEntry> loaded_;
};

std::expected<RestoredBatch, std::string> restore_batch(const spool::PendingBatch& pending, EntryCache& cache) {
  const spool::SequencedEntry& s = pending.batch;
  RestoredBatch b;
  b.tp = TopicPartition{s.topic, s.partition};
  b.producer_id = ProducerId{s.producer_id};
  b.producer_epoch = ProducerEpoch{s.producer_epoch};
  b.base_sequence = s.base_sequence;
  b.record_count = s.record_count;
  b.journal_id = pending.id;
  for (const spool::RecordRange& range : s.ranges) {
    auto loaded = cache.load(range.records);
    if (!loaded) return std::unexpected(loaded.error());
    auto run = run_from_entry(std::move(*loaded), range.first_record, range.record_count);
    if (!run) return std::unexpected(run.error());
    b.runs.push_back(RestoredRun{std::move(*run), durable_completion(s.topic, s.partition, range.record_count)});
  }
  return b;
}

}  // namespace

ReplayPlan plan_replay(const spool::SpoolWriter& writer) {
  ReplayPlan plan;
  {
    EntryCache cache(writer);
    for (const spool::PendingBatch& pending : writer.index().unresolved_batches()) {
      auto batch = restore_batch(pending, cache);
      if (!batch) {
        plan.problems.push_back("batch " + std::to_string(pending.id) + " for " + pending.batch.topic + "-" +
                                std::to_string(pending.batch.partition) + ": " + batch.error());
        continue;
      }
      plan.records += batch->record_count;
      plan.batches.push_back(std::move(*batch));
    }
  }
  for (const spool::PendingRecords& r : writer.index().unsequenced_records()) {
    plan.records += r.record_count - r.first_unsequenced;
    plan.unsequenced.push_back(FeedItem{r.id, r.topic, r.partition, r.first_unsequenced});
  }
  return plan;
}

}  // namespace pp::durable
