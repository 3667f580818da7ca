// A record run: the records one client request sent to one partition, kept
// whole and in order through the pipeline (docs/design/PIPELINE.md, "One
// record run per partition of a request"), and how it ends: exactly once,
// with its upstream base offset or an error code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/protocol/error_code.h"
#include "proxy/records/record.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {

struct RunRecord {
  // CreateTime; the front end fills v0's (PIPELINE.md, "A record without a
  // timestamp gets the receive time").
  std::int64_t timestamp_ms = -1;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  // Into the decoded batch the run's storage keeps, as key and value point
  // into its bytes: a record's headers are decoded once, never copied.
  std::span<const RecordHeaderView> headers;
};

// A client's RecordBatch v2 records section that can go upstream byte for
// byte, never re-encoded: offset deltas 0..n-1, CreateTime, every
// timestamp known, so only the header around it is the proxy's.
struct EncodedRecords {
  ByteView bytes;
  std::int64_t base_timestamp = -1;
  std::int64_t max_timestamp = -1;
  // CRC-32C of `bytes`, when the client's checked CRC gave it for free.
  std::optional<std::uint32_t> crc;
};

// Who sent a run, as its durable copy records it (docs/design/SPOOL.md,
// "Entries"): the request's acks, and an idempotent client's own producer
// id, epoch and base sequence (all -1 for a client without them), so the
// client's dedup state can be rebuilt after a restart. The pipeline does not
// read it.
struct RunClient {
  std::int16_t acks = -1;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
};

struct RecordRun {
  // Keeps alive the bytes the records' views point into (a client's frame, a
  // decompressed buffer); released when the run completes.
  std::shared_ptr<const void> storage;
  std::vector<RunRecord> records;
  // Set when `records` are exactly this section's, in order; the records stay
  // decoded for checks, accounting and a record-by-record rebuild.
  std::optional<EncodedRecords> encoded;
  // What this run costs against buffer_memory_bytes beside its storage's
  // client frame (charged by the front end).
  std::size_t size_bytes = 0;
  // An upper bound of the upstream batch bytes its records take (the front
  // end sums it while checking them). 0: the pipeline computes it.
  std::size_t upstream_bytes_bound = 0;
  // Of size_bytes: an upper bound of the upstream batch bytes its records
  // will be copied into (values an uncompressed batch borrows are not).
  // Counted from decoding on, so the budget sees the copy before it is made
  // (the frame stays pinned beside the batch until the acknowledgement);
  // handed to the batch's own charge once the run is batched. 0 with
  // upstream_bytes_bound 0: not counted ahead.
  std::size_t batch_bytes_reserved = 0;
  // Who sent the run (the front end: its connection's id), for the
  // withdrawal rule of RecordSink::withdraw(); 0: no origin, withdrawn alone.
  std::uint64_t origin = 0;
  // The durable copy of these records (a spool Records entry's id, see
  // batch_journal.h), or 0: none. A run with one is on disk and will be
  // replayed after a restart, whether its client was answered from the spool
  // or waits for its outcome: the pipeline journals every batch that carries
  // it and never gives it up for a retriable reason (no delivery timeout, no
  // withdrawal).
  std::uint64_t durable_entry = 0;
  // Which record of that copy is records[0] (a copy replayed after a restart
  // may continue where its last batch ended).
  std::int32_t durable_first_record = 0;
  // Who sent it (the front end fills it); what a durable copy records.
  RunClient client;
};

// What `records` take in an upstream batch, at most, and of that what is
// copied into the batch's own buffer: the accumulator sizes batches by the
// first and their buffers by the second.
struct UpstreamBytes {
  std::size_t bound = 0;
  std::size_t copied = 0;
};
inline UpstreamBytes upstream_batch_bytes(std::span<const RunRecord> records, CompressionCodec codec) {
  UpstreamBytes bytes;
  for (const RunRecord& r : records) {
    const std::size_t bound = RecordBatchBuilder::record_size_upper_bound(
        r.key ? std::optional<std::size_t>(r.key->size()) : std::nullopt,
        r.value ? std::optional<std::size_t>(r.value->size()) : std::nullopt, r.headers);
    bytes.bound += bound;
    bytes.copied += bound - (RecordBatchBuilder::borrows_value(codec, r.value) ? r.value->size() : 0);
  }
  return bytes;
}

struct RunResult {
  ErrorCode error = ErrorCode::kNone;
  std::int64_t base_offset = -1;         // the run's first record in the upstream log
  std::int64_t log_append_time_ms = -1;  // -1 for CreateTime topics
  std::int64_t log_start_offset = -1;
  std::string error_message;
  // Taken back before any of it was sent (RecordSink::withdraw): not
  // appended, so a retry of it cannot duplicate it.
  bool withdrawn = false;
  // Failed, but some upstream attempt of its records may be in the log (an
  // attempt ended with an unknown outcome, or the delivery timeout expired
  // it in flight): a retry of the same records may duplicate them.
  bool maybe_written = false;
};

using RunCompletion = std::function<void(const RunResult&)>;

}  // namespace pp
