#include "proxy/pipeline/accumulator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "proxy/protocol/codec.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {

std::shared_ptr<RunTracker> Accumulator::admit(RecordRun run, RunCompletion done, std::int64_t now) {
  auto tracker = std::make_shared<RunTracker>();
  tracker->enqueued_ms = now;
  // A record without a timestamp (magic 0) gets the receive time, or the
  // broker would expire this producer's state early: it counts from record
  // timestamps (PIPELINE.md, "A record without a timestamp gets the receive time").
  const std::int64_t receive_time =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (auto& r : run.records) {
    if (r.timestamp_ms < 0) r.timestamp_ms = receive_time;
  }
  // The front end's runs come with it (the copy counted ahead); others are
  // sized here. Values are borrowed only from a run's storage.
  if (run.upstream_bytes_bound != 0) {
    tracker->encoded_size_estimate = run.upstream_bytes_bound;
    tracker->own_size_estimate = run.batch_bytes_reserved;
  } else {
    const UpstreamBytes bytes =
        upstream_batch_bytes(run.records, run.storage ? config_.compression : CompressionCodec::kNone);
    tracker->encoded_size_estimate = bytes.bound;
    tracker->own_size_estimate = bytes.copied;
  }
  tracker->durable_entry = run.durable_entry;
  tracker->durable_first_record = run.durable_first_record;
  tracker->run = std::move(run);
  tracker->done = std::move(done);
  tracker->charge = memory_.charge(MemoryUse::kDecodedRecords, tracker->run.size_bytes);
  ++runs_outstanding_;
  if (tracker->run.records.empty()) deferred_finish_.push_back(tracker);  // nothing to send; answered later
  return tracker;
}

void Accumulator::enqueue(PartitionState& p, std::shared_ptr<RunTracker> run) {
  p.add_queued_estimate(static_cast<std::int64_t>(run->encoded_size_estimate));
  run->queued_in = &p;
  // A durable run is never withdrawn, nor barred with its origin's: it is
  // not in its origin's list.
  if (run->run.origin != 0 && !run->durable()) p.queued_by_origin()[run->run.origin].push_back(run.get());
  p.queued_runs().push_back(std::move(run));
}

void Accumulator::leave_queue(PartitionState& p, RunTracker& run) {
  run.queued_in = nullptr;
  if (run.run.origin == 0 || run.durable()) return;
  auto& by_origin = p.queued_by_origin();
  auto list = by_origin.find(run.run.origin);
  // Runs leave from the queue's head, in order: each is its origin's first.
  if (list == by_origin.end() || list->second.empty() || list->second.front() != &run) return;
  list->second.pop_front();
  if (list->second.empty()) by_origin.erase(list);
}

WithdrawOutcome Accumulator::withdraw(RunTracker& run) {
  if (run.finished) return WithdrawOutcome::kEnded;
  if (!run.withdrawable()) return WithdrawOutcome::kInFlight;
  PartitionState& p = *run.queued_in;
  // It and its origin's runs queued behind it leave the origin's list now;
  // in the partition's queue they stay as finished runs, dropped when they
  // reach its head (the queue is only ever walked from there).
  std::vector<RunTracker*> behind;
  if (run.run.origin != 0) {
    auto list = p.queued_by_origin().find(run.run.origin);
    if (list != p.queued_by_origin().end()) {
      auto& runs = list->second;
      const auto at = std::find(runs.rbegin(), runs.rend(), &run);
      if (at != runs.rend()) {
        const auto first = std::prev(at.base());  // the withdrawn run's place
        behind.assign(std::next(first), runs.end());
        runs.erase(first, runs.end());
        if (runs.empty()) p.queued_by_origin().erase(list);
      }
    }
  }
  // The client hears the failures in the order it sent the records, before
  // it can send anything after hearing them.
  take_back(p, run, "withdrawn at the client's deadline: none of its records was sent upstream");
  for (RunTracker* later : behind) {
    take_back(p, *later,
              "withdrawn with an earlier request of its connection to this partition, at that one's deadline");
  }
  settle_head(p);
  return WithdrawOutcome::kWithdrawn;
}

void Accumulator::withdraw_batched(PartitionState& p, RunTracker& run, std::string message) {
  if (run.finished) return;
  if (run.queued_in != nullptr) {  // the rest of a run larger than a batch
    leave_queue(p, run);           // it is its origin's first, at the queue's head
    p.add_queued_estimate(-static_cast<std::int64_t>(run.encoded_size_estimate));
  }
  run.result.error = ErrorCode::kNotEnoughReplicas;
  run.result.error_message = std::move(message);
  run.result.withdrawn = true;
  finish_run(run);
  settle_head(p);
}

void Accumulator::withdraw_queued_of(PartitionState& p, std::uint64_t origin) {
  if (origin == 0) return;
  auto list = p.queued_by_origin().find(origin);
  if (list == p.queued_by_origin().end() || list->second.empty()) return;
  RunTracker& first = *list->second.front();
  if (first.withdrawable()) withdraw(first);  // and its origin's runs behind it
}

void Accumulator::take_back(PartitionState& p, RunTracker& run, std::string message) {
  p.add_queued_estimate(-static_cast<std::int64_t>(run.encoded_size_estimate));
  run.queued_in = nullptr;
  run.result.error = ErrorCode::kNotEnoughReplicas;
  run.result.error_message = std::move(message);
  run.result.withdrawn = true;
  finish_run(run);
}

void Accumulator::settle_head(PartitionState& p) {
  auto& queue = p.queued_runs();
  while (!queue.empty() && queue.front()->finished) queue.pop_front();
}

void Accumulator::finish_deferred() {
  auto deferred = std::move(deferred_finish_);
  deferred_finish_.clear();
  for (const auto& run : deferred) finish_run(*run);
}

bool Accumulator::linger_done(const PartitionState& p, std::int64_t now) const {
  if (p.queued_runs().empty()) return false;
  if (flushing_ || p.queued_estimate_bytes() >= batch_bytes_for(p)) return true;
  return now - p.queued_runs().front()->enqueued_ms >= config_.linger_ms;
}

namespace {

// A value the batch borrows must stay borrowed in the request that carries
// the batch, or it is copied there after all.
static_assert(kMinBorrowedPieceBytes <= RecordBatchBuilder::kMinBorrowedValueBytes);

// Whether `run` would start a batch of `batch_bytes` as the client encoded
// it: a client's v2 records go as they are, which costs a fraction of
// re-encoding every record. Behind other records their offset
// deltas and timestamps would be wrong, so only at a batch's start.
bool goes_as_encoded(const RunTracker& run, std::size_t batch_bytes) {
  const auto& encoded = run.run.encoded;
  return run.records_batched == 0 && encoded && record_batch_layout::kHeaderSize + encoded->bytes.size() <= batch_bytes;
}

// Appends what of `run` fits in `builder` within `batch_bytes`, from its
// first record not yet batched; returns how many records that was.
std::uint32_t append_run(RecordBatchBuilder& builder, RunTracker& run, std::size_t batch_bytes) {
  const auto& records = run.run.records;
  const std::uint32_t first = run.records_batched;
  if (builder.empty() && goes_as_encoded(run, batch_bytes)) {
    // Not even copied: the batch borrows the section from the client's
    // frame, which the run's storage keeps alive, as the batch does now.
    const auto& encoded = run.run.encoded;
    builder.append_encoded(encoded->bytes, static_cast<std::int32_t>(records.size()), encoded->base_timestamp,
                           encoded->max_timestamp, encoded->crc, run.run.storage);
    run.records_batched = static_cast<std::uint32_t>(records.size());
    return run.records_batched;
  }
  while (run.records_batched < records.size()) {
    const RunRecord& r = records[run.records_batched];
    const std::int64_t ts = r.timestamp_ms;  // admit() filled missing ones
    if (!builder.empty() && builder.size_bytes_with(ts, r.key, r.value, r.headers) > batch_bytes) {
      break;  // only reachable for a run larger than a batch: it spans batches
    }
    builder.append_borrowing_value(ts, r.key, r.value, r.headers, run.run.storage);
    ++run.records_batched;
  }
  return run.records_batched - first;
}

// What a batch of `queue`'s first runs will hold as its own bytes, at most
// `batch_bytes`: the header and what is copied, not what it borrows (an
// encoded section, large values). Its buffer keeps this capacity, charged to
// the budget, until the batch is acknowledged.
std::size_t own_bytes_estimate(const std::deque<std::shared_ptr<RunTracker>>& queue, std::size_t batch_bytes,
                               bool uncompressed) {
  std::size_t batch = record_batch_layout::kHeaderSize;
  std::size_t own = record_batch_layout::kHeaderSize;
  for (const auto& run : queue) {
    if (batch >= batch_bytes) break;
    if (run->finished) continue;  // withdrawn
    const bool first = batch == record_batch_layout::kHeaderSize;
    batch += run->encoded_size_estimate;
    // The first run's section may be borrowed whole (append_encoded).
    const bool borrowed_whole = first && uncompressed && run->run.storage && goes_as_encoded(*run, batch_bytes);
    if (!borrowed_whole) own += run->own_size_estimate;
  }
  return std::min(own, batch_bytes);
}

}  // namespace

// "Sequences at first send" (PIPELINE.md): the batch is built when first
// sent, so a batch that expires unsent never consumes a sequence. Runs stay
// whole unless one alone exceeds the batch (PIPELINE.md, "One record run per
// partition of a request").
BatchPtr Accumulator::build_batch(PartitionState& p, const ProducerIdAndEpoch& id, std::int64_t now) {
  RecordBatchBuildOptions options;
  options.producer_id = id.id.value;
  options.producer_epoch = id.epoch.value;
  options.base_sequence = p.next_sequence();
  options.compression = config_.compression;
  // Sized for what is queued (an upper bound), not batch_bytes: a built
  // batch keeps its buffer until acknowledged, and a 1 MiB buffer per small
  // batch held more than twice the budget under a stalled upstream.
  const std::size_t batch_bytes = batch_bytes_for(p);
  auto& queue = p.queued_runs();
  RecordBatchBuilder builder(
      options, own_bytes_estimate(p.queued_runs(), batch_bytes, config_.compression == CompressionCodec::kNone));

  auto batch = std::make_shared<ProducerBatch>();
  batch->tp = p.tp();
  batch->created_ms = now;
  while (!queue.empty()) {
    const auto& run = queue.front();
    if (run->finished) {  // withdrawn
      queue.pop_front();
      continue;
    }
    const bool whole_run = run->records_batched == 0;
    if (!builder.empty() && whole_run && builder.size_bytes() + run->encoded_size_estimate > batch_bytes) {
      break;
    }
    // A batch is journaled whole or not at all (BatchJournaling).
    if (!builder.empty() && run->durable() != batch->durable) break;
    batch->durable = run->durable();
    BatchPiece piece{run, run->records_batched, 0, static_cast<std::uint32_t>(builder.record_count())};
    piece.record_count = append_run(builder, *run, batch_bytes);
    if (piece.record_count > 0) {
      ++run->pieces_outstanding;
      run->batched_in = &p;
      batch->created_ms = std::min(batch->created_ms, run->enqueued_ms);
      batch->pieces.push_back(piece);
    }
    if (!run->fully_batched()) break;
    p.add_queued_estimate(-static_cast<std::int64_t>(run->encoded_size_estimate));
    // The room it held for its copy is the batch's now (charged below).
    run->charge.set(run->run.size_bytes - run->run.batch_bytes_reserved);
    leave_queue(p, *run);
    queue.pop_front();
  }
  settle_head(p);
  batch->record_count = builder.record_count();
  batch->bytes = builder.build_frame();
  batch->journal_due = batch->durable;
  // Held until the batch is acknowledged or fails: a stalled upstream keeps
  // every built batch alive beside the runs it carries. A borrowed section
  // is not charged again: its run's frame is.
  batch->charge = memory_.charge(MemoryUse::kUpstreamBatches, batch->bytes.own.capacity());
  p.assign(batch);
  spdlog::trace("{}: new batch seq {}..{} ({} records, {} bytes, ordinal {})", p.tp().to_string(), batch->base_sequence,
                batch->last_sequence(), batch->record_count, batch->bytes.size(), batch->ordinal);
  return batch;
}

// A run that expires takes the runs queued behind it with it ("Delivery
// timeout and unresolved sequences", PIPELINE.md): sent later, they would
// reach the log ahead of the expired run's
// retry, and a broker would have refused them as a gap anyway.
void Accumulator::expire_queued(PartitionState& p, std::int64_t now) {
  auto& queue = p.queued_runs();
  if (queue.empty() || queue.front()->records_batched != 0 || queue.front()->durable() ||
      now - queue.front()->enqueued_ms < config_.delivery_timeout_ms) {
    return;
  }
  bool first = true;
  while (!queue.empty() && queue.front()->records_batched == 0 && !queue.front()->durable()) {
    auto run = queue.front();
    queue.pop_front();
    if (run->finished) continue;  // withdrawn
    leave_queue(p, *run);
    p.add_queued_estimate(-static_cast<std::int64_t>(run->encoded_size_estimate));
    run->result.error = ErrorCode::kRequestTimedOut;
    run->result.error_message =
        first ? "delivery timeout before the records were sent" : "queued behind records whose delivery timed out";
    first = false;
    observer_.on_records_failed(ErrorCode::kRequestTimedOut, static_cast<std::int64_t>(run->run.records.size()));
    run->records_batched = static_cast<std::uint32_t>(run->run.records.size());
    finish_run(*run);
  }
  settle_head(p);
}

void Accumulator::fail_queued(PartitionState& p, ErrorCode error, const std::string& message, DurableRuns durable) {
  auto& queue = p.queued_runs();
  std::deque<std::shared_ptr<RunTracker>> kept;
  while (!queue.empty()) {
    auto run = queue.front();
    queue.pop_front();
    if (run->finished) continue;  // withdrawn
    if (run->durable() && durable == DurableRuns::kKeep) {
      kept.push_back(std::move(run));
      continue;
    }
    if (run->durable() && durable == DurableRuns::kGiveUp) {
      journaling_.records_failed(*run, run->records_batched,
                                 static_cast<std::uint32_t>(run->run.records.size()) - run->records_batched, error,
                                 message);
    }
    leave_queue(p, *run);
    p.add_queued_estimate(-static_cast<std::int64_t>(run->encoded_size_estimate));
    if (run->result.error == ErrorCode::kNone) {
      run->result.error = error;
      run->result.error_message = message;
    }
    observer_.on_records_failed(error, static_cast<std::int64_t>(run->run.records.size() - run->records_batched));
    run->records_batched = static_cast<std::uint32_t>(run->run.records.size());
    if (run->pieces_outstanding == 0) finish_run(*run);
  }
  queue = std::move(kept);
}

void Accumulator::finish_piece(const BatchPiece& piece, const RunResult* success, ErrorCode error,
                               const std::string& message) {
  RunTracker& run = *piece.run;
  --run.pieces_outstanding;
  if (success && piece.first_record == 0) {
    run.result.base_offset = success->base_offset;
    run.result.log_append_time_ms = success->log_append_time_ms;
    run.result.log_start_offset = success->log_start_offset;
  }
  if (!success && run.result.error == ErrorCode::kNone) {
    run.result.error = error;
    run.result.error_message = message;
  }
  if (run.pieces_outstanding == 0 && run.fully_batched()) finish_run(run);
}

void Accumulator::finish_run(RunTracker& run) {
  if (run.finished) return;
  run.finished = true;
  --runs_outstanding_;
  run.charge.reset();
  auto done = std::move(run.done);
  const RunResult result = run.result;
  run.run = RecordRun{};  // release the client's bytes now
  if (done) done(result);
}

}  // namespace pp
