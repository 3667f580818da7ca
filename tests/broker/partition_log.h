// One partition's log: the client batches as appended (base offset and
// partition leader epoch filled in, everything else byte for byte), plus a
// decoded copy of every record so tests can assert exactly-once and order
// without parsing Fetch responses.
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
  std::optional<Bytes> key;
  std::optional<Bytes> value;
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
  Bytes bytes;                   // the stored batch, as Fetch returns it

  std::int64_t last_offset() const { return base_offset + last_offset_delta; }
};

class PartitionLog {
 public:
  std::int64_t log_start_offset() const { return 0; }  // nothing is ever deleted
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
  // leader's unreplicated tail (docs/design/PIPELINE.md D.4).
  void truncate_last_batches(std::size_t count);

  const std::vector<AppendedBatch>& batches() const { return batches_; }
  const std::vector<AppendedRecord>& records() const { return records_; }
  std::int64_t record_count() const { return static_cast<std::int64_t>(records_.size()); }

  // Batches from the one holding `offset`, concatenated up to `max_bytes`, but
  // always at least one whole batch (KIP-74), as a broker serves Fetch.
  Bytes read(std::int64_t offset, std::size_t max_bytes) const;

  // ListOffsets by timestamp: the first offset whose record timestamp is >=
  // `timestamp`, and that timestamp; nullopt if none.
  struct OffsetAndTimestamp {
    std::int64_t offset = -1;
    std::int64_t timestamp = -1;
  };
  std::optional<OffsetAndTimestamp> offset_for_timestamp(std::int64_t timestamp) const;
  // KIP-734 (ListOffsets v7, timestamp -3): the record with the largest timestamp.
  std::optional<OffsetAndTimestamp> max_timestamp_offset() const;

 private:
  std::vector<AppendedBatch> batches_;
  std::vector<AppendedRecord> records_;
  std::int64_t next_offset_ = 0;
  bool ever_written_ = false;
};

}  // namespace pp::test_broker
