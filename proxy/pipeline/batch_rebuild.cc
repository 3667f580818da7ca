#include "proxy/pipeline/batch_rebuild.h"

#include "proxy/records/record_batch_builder.h"

namespace pp {

BatchPtr rebuild_batch(const ProducerBatch& from, const std::vector<BatchPiece>& pieces, std::int32_t base_sequence,
                       CompressionCodec compression, MemoryBudget& memory) {
  auto batch = std::make_shared<ProducerBatch>();
  batch->tp = from.tp;
  batch->created_ms = from.created_ms;
  batch->attempts = from.attempts;
  batch->state = BatchState::kAwaitingRetry;
  batch->renumbered = from.renumbered;
  batch->ever_ambiguous = from.ever_ambiguous;
  batch->producer_id = from.producer_id;
  batch->producer_epoch = from.producer_epoch;
  batch->base_sequence = base_sequence;
  // Other boundaries: journaled again, superseding `from`'s entry, before it goes.
  batch->durable = from.durable;
  batch->restored = from.restored;
  batch->journal_due = from.durable;
  batch->journal_replaces = from.journal_id != kNoJournalId ? from.journal_id : from.journal_replaces;
  RecordBatchBuildOptions options;
  options.producer_id = from.producer_id.value;
  options.producer_epoch = from.producer_epoch.value;
  options.base_sequence = base_sequence;
  options.compression = compression;
  RecordBatchBuilder builder(options);
  for (BatchPiece piece : pieces) {
    piece.offset_in_batch = static_cast<std::uint32_t>(builder.record_count());
    for (std::uint32_t i = 0; i < piece.record_count; ++i) {
      const RunRecord& r = piece.run->run.records[piece.first_record + i];
      builder.append_borrowing_value(r.timestamp_ms, r.key, r.value, r.headers, piece.run->run.storage);
    }
    ++piece.run->pieces_outstanding;
    batch->pieces.push_back(piece);
  }
  batch->record_count = builder.record_count();
  batch->bytes = builder.build_frame();
  batch->charge = memory.charge(MemoryUse::kUpstreamBatches, batch->bytes.own.capacity());
  return batch;
}

}  // namespace pp
