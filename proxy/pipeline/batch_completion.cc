#include "proxy/pipeline/batch_completion.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace pp {

void BatchCompletion::complete(PartitionState& p, const BatchPtr& batch, std::int64_t base_offset,
                               const ProducePartitionResponse* response) {
  p.acknowledge(batch);
  journaling_.acknowledged(*batch, base_offset);
  // Counted before any client is answered: a client told "acknowledged" that
  // scrapes /metrics next must find its records in records_delivered_total
  // (the answer can be written synchronously inside finish_piece).
  observer_.on_records_delivered(batch->record_count);
  RunResult ok;
  ok.log_append_time_ms = response ? response->log_append_time_ms : -1;
  ok.log_start_offset = response ? response->log_start_offset : -1;
  for (const auto& piece : batch->pieces) {
    if (piece.run->result.withdrawn) {
      // Not reached: a batch carrying a withdrawn run is never sent
      // (RefusedBatchWithdrawal), so the broker cannot have appended it.
      spdlog::error("{}: records withdrawn at their client's deadline were acknowledged upstream (seq {}..{})",
                    p.tp().to_string(), batch->base_sequence, batch->last_sequence());
    }
    ok.base_offset = base_offset >= 0 ? base_offset + piece.offset_in_batch : -1;
    accumulator_.finish_piece(piece, &ok, ErrorCode::kNone, {});
  }
}

void BatchCompletion::fail(PartitionState& p, const BatchPtr& batch, ErrorCode error, const std::string& message) {
  journaling_.failed(*batch, error, message);
  end_failed(p, batch, error, message);
}

void BatchCompletion::end_failed(PartitionState& p, const BatchPtr& batch, ErrorCode error,
                                 const std::string& message) {
  p.forget(batch);
  observer_.on_records_failed(error, batch->record_count);  // before the clients hear, as above
  for (const auto& piece : batch->pieces) {
    if (batch->ever_ambiguous) piece.run->result.maybe_written = true;
    accumulator_.finish_piece(piece, nullptr, error, message);
  }
}

void BatchCompletion::expire_sent(PartitionState& p, const BatchPtr& batch) {
  p.mark_unresolved(batch);
  end_failed(p, batch, ErrorCode::kRequestTimedOut, "delivery timeout; the records may have been written");
  // As for a run that expires unsent: what is queued behind must not reach
  // the log ahead of the expired records' retry.
  accumulator_.fail_queued(p, ErrorCode::kRequestTimedOut, "queued behind records whose delivery timed out",
                           DurableRuns::kKeep);
}

void BatchCompletion::abort_all(ErrorCode error) {
  for (auto& [tp, p] : partitions_) {
    const std::vector<BatchPtr> unacked(p->unacked().begin(), p->unacked().end());
    for (const auto& b : unacked) end_failed(*p, b, error, "aborted");
    accumulator_.fail_queued(*p, error, "aborted", DurableRuns::kAbort);
  }
}

}  // namespace pp
