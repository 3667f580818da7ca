// One partition's log: the client batches as appended (base offset and
// partition leader epoch filled in, everything else byte for byte), plus a
// decoded copy of every record so tests can assert exactly-once and order
// without parsing Fetch responses. An optional byte bound releases the oldest
// payloads (as Kafka's retention deletes old segments) so a long benchmark
// does not grow without limit; the metadata of every batch and record stays.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "proxy/base/bytes.h"
#include "tests/broker/cluster_options.h"

namespace pp::test_broker {

// One appended record, with the producer identity it was written under.
struct AppendedRecord {
  std::int64_t offset = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t sequence = -1;  // base_sequence + offset delta (wrapping); -1 without a producer id
  std::int64_t timestamp = -1;
  std::optional<Bytes> key;        // nullopt also once retention released the batch
  std::optional<Bytes> value;      // likewise
  BrokerId leader = -1;            // the broker that appended it, under...
  std::int32_t leader_epoch = -1;  // ...this leader epoch
};

// One appended batch: what Fetch serves and what producer state is rebuilt from.
struct AppendedBatch {
  std::int64_t base_offset = 0;
  std::int32_t last_offset_delta = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t record_count = 0;
  std::int64_t max_timestamp = -1;
  BrokerId leader = -1;
  std::int32_t leader_epoch = -1;
  std::size_t first_record = 0;  // index into PartitionLog::records()
  Bytes bytes;                   // the stored batch, as Fetch returns it; empty once released

  std::int64_t last_offset() const { return base_offset + last_offset_delta; }
};

class PartitionLog {
 public:
  // Payload bound in stored batch bytes; 0 keeps everything. Takes effect at
  // the next append. The newest batch is always kept whole.
  void set_retention_bytes(std::size_t bytes) { retention_bytes_ = bytes; }
  std::size_t retention_bytes() const { return retention_bytes_; }
  // Bytes of the batches still holding their payload (a running count).
  std::size_t stored_bytes() const { return stored_bytes_; }

  // The base offset of the oldest batch still holding its bytes: Kafka's log
  // start offset after retention. 0 until retention releases anything.
  std::int64_t log_start_offset() const { return log_start_offset_; }
  // The next offset; also the high watermark (every replica is in sync).
  std::int64_t log_end_offset() const { return next_offset_; }
  // True once anything was appended, even if a truncation removed it since
  // (KAFKA-15591 distinguishes "never written").
  bool ever_written() const { return ever_written_; }

  // Appends `batch_bytes` (one whole v2 batch), rewriting its BaseOffset and
  // PartitionLeaderEpoch, which the CRC does not cover. `records` are the
  // decoded records of that batch. Returns the batch's base offset.
  std::int64_t append(ByteView batch_bytes, AppendedBatch meta, std::vector<AppendedRecord> records);

  // Drops the last `count` batches, as a new leader truncates the old
  // leader's unreplicated tail (docs/design/PIPELINE.md D.4). Reaching into
  // released batches moves the log start to the new end.
  void truncate_last_batches(std::size_t count);

  // Every batch and record ever appended (and not truncated), released or not.
  const std::vector<AppendedBatch>& batches() const { return batches_; }
  const std::vector<AppendedRecord>& records() const { return records_; }
  std::int64_t record_count() const { return static_cast<std::int64_t>(records_.size()); }

  // Batches from the one holding `offset`, concatenated up to `max_bytes`, but
  // always at least one whole batch (KIP-74), as a broker serves Fetch. Only
  // retained batches: an offset below the log start reads from the log start.
  Bytes read(std::int64_t offset, std::size_t max_bytes) const;

  // ListOffsets by timestamp: the first retained offset whose record
  // timestamp is >= `timestamp`, and that timestamp; nullopt if none.
  struct OffsetAndTimestamp {
    std::int64_t offset = -1;
    std::int64_t timestamp = -1;
  };
  std::optional<OffsetAndTimestamp> offset_for_timestamp(std::int64_t timestamp) const;
  // KIP-734 (ListOffsets v7, timestamp -3): the retained record with the
  // largest timestamp.
  std::optional<OffsetAndTimestamp> max_timestamp_offset() const;

 private:
  void release_oldest_over_bound();
  std::span<const AppendedRecord> retained_records() const;

  std::vector<AppendedBatch> batches_;
  std::vector<AppendedRecord> records_;
  std::int64_t next_offset_ = 0;
  std::size_t retention_bytes_ = 0;
  std::size_t stored_bytes_ = 0;
  std::size_t first_retained_batch_ = 0;  // batches before it hold no bytes
  std::int64_t log_start_offset_ = 0;
  bool ever_written_ = false;
};

}  // namespace pp::test_broker
