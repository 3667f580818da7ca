// RecordBatch v2 (magic 2), the only record format of Produce v3+ (KIP-98;
// Kafka's DefaultRecordBatch and DefaultRecord). Layout in docs/design/PIPELINE.md,
// section B. This header is the reading side; record_batch_builder.h writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/protocol/wire_reader.h"
#include "proxy/records/compression.h"
#include "proxy/records/decode_budget.h"
#include "proxy/records/record.h"

namespace pp {

// Byte offsets of the header fields (DefaultRecordBatch's *_OFFSET constants).
namespace record_batch_layout {
inline constexpr std::size_t kBaseOffset = 0;
inline constexpr std::size_t kLength = 8;
inline constexpr std::size_t kPartitionLeaderEpoch = 12;
inline constexpr std::size_t kMagic = 16;
inline constexpr std::size_t kCrc = 17;
inline constexpr std::size_t kAttributes = 21;  // the CRC covers from here to the end
inline constexpr std::size_t kLastOffsetDelta = 23;
inline constexpr std::size_t kBaseTimestamp = 27;
inline constexpr std::size_t kMaxTimestamp = 35;
inline constexpr std::size_t kProducerId = 43;
inline constexpr std::size_t kProducerEpoch = 51;
inline constexpr std::size_t kBaseSequence = 53;
inline constexpr std::size_t kRecordsCount = 57;
inline constexpr std::size_t kRecords = 61;
inline constexpr std::size_t kHeaderSize = 61;
// BaseOffset and Length precede what Length counts (Records.LOG_OVERHEAD).
inline constexpr std::size_t kLogOverhead = 12;
}  // namespace record_batch_layout

inline constexpr std::int8_t kRecordBatchMagic = 2;

// Attribute bits (DefaultRecordBatch): 0-2 codec, 3 timestamp type,
// 4 transactional (KIP-98), 5 control, 6 delete horizon (KIP-534).
namespace record_batch_attributes {
inline constexpr std::int16_t kCodecMask = 0x07;
inline constexpr std::int16_t kTimestampType = 0x08;
inline constexpr std::int16_t kTransactional = 0x10;
inline constexpr std::int16_t kControl = 0x20;
inline constexpr std::int16_t kDeleteHorizon = 0x40;
}  // namespace record_batch_attributes

struct RecordBatchHeader {
  std::int64_t base_offset = 0;
  std::int32_t batch_length = 0;  // bytes after this field: total size - 12
  std::int32_t partition_leader_epoch = -1;
  std::int8_t magic = kRecordBatchMagic;
  std::uint32_t crc = 0;
  std::int16_t attributes = 0;
  std::int32_t last_offset_delta = 0;
  std::int64_t base_timestamp = -1;
  std::int64_t max_timestamp = -1;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t records_count = 0;

  // nullopt for the unassigned codec ids 5-7.
  std::optional<CompressionCodec> compression() const {
    return compression_codec_from_id(attributes & record_batch_attributes::kCodecMask);
  }
  TimestampType timestamp_type() const {
    return (attributes & record_batch_attributes::kTimestampType) ? TimestampType::kLogAppendTime
                                                                  : TimestampType::kCreateTime;
  }
  bool is_transactional() const { return attributes & record_batch_attributes::kTransactional; }
  bool is_control() const { return attributes & record_batch_attributes::kControl; }
  bool has_delete_horizon() const { return attributes & record_batch_attributes::kDeleteHorizon; }
  std::size_t total_size() const { return static_cast<std::size_t>(batch_length) + record_batch_layout::kLogOverhead; }
  std::int64_t last_offset() const { return wrapping_add(base_offset, last_offset_delta); }
};

// Decodes the 61-byte header only. Checks the magic (kUnsupported unless 2) and
// that Length covers at least the rest of the header; not the CRC, not that
// the buffer holds the whole batch.
Decoded<RecordBatchHeader> decode_record_batch_header(ByteView batch);

struct RecordBatchReadOptions {
  // Cap on the decompressed records section; over it is kTooLarge.
  std::size_t max_decompressed_bytes = 64 * 1024 * 1024;
  bool verify_crc = true;
  // When set, the decompressed bytes, the RecordViews and their headers are
  // charged here before they are allocated; over it is kOverBudget.
  DecodeBudget* budget = nullptr;
  // Test and diagnostic switch: false decodes every record with the checked
  // reader alone, which the fast one must agree with. Either way the same
  // batches decode to the same records or fail with the same error.
  bool fast_records = true;
};

// A decoded batch. Key, value and header views point into the wire bytes (an
// uncompressed batch: keep them alive) or into the batch's own decompressed
// buffer (a compressed one). Move-only, so the views stay valid: moving keeps
// the decompressed buffer's storage in place.
class RecordBatchView {
 public:
  RecordBatchView(RecordBatchView&&) noexcept = default;
  RecordBatchView& operator=(RecordBatchView&&) noexcept = default;
  RecordBatchView(const RecordBatchView&) = delete;
  RecordBatchView& operator=(const RecordBatchView&) = delete;

  const RecordBatchHeader& header() const { return header_; }
  ByteView wire_bytes() const { return wire_; }
  std::span<const RecordView> records() const { return records_; }
  // The records section as the records are encoded, decompressed if the batch
  // was compressed: what another batch can carry unchanged when its header
  // says the same base timestamp and offset deltas 0..n-1.
  ByteView records_bytes() const {
    return header_.compression().value_or(CompressionCodec::kNone) == CompressionCodec::kNone
               ? wire_.subspan(record_batch_layout::kRecords)
               : ByteView(decompressed_);
  }

  // CRC-32C of records_bytes() alone, taken out of the batch's CRC without
  // reading the records again: known only for an uncompressed batch whose CRC
  // was checked (an upstream batch carrying the section as it is reuses it).
  std::optional<std::uint32_t> records_crc() const;

  std::int64_t offset_of(const RecordView& r) const { return wrapping_add(header_.base_offset, r.offset_delta); }
  // A LogAppendTime batch's records all carry the batch's MaxTimestamp
  // (DefaultRecordBatch: the broker sets it once for the whole batch).
  std::int64_t timestamp_of(const RecordView& r) const {
    return header_.timestamp_type() == TimestampType::kLogAppendTime
               ? header_.max_timestamp
               : wrapping_add(header_.base_timestamp, r.timestamp_delta);
  }

 private:
  RecordBatchView() = default;
  friend Decoded<RecordBatchView> decode_record_batch(ByteView, const RecordBatchReadOptions&);

  RecordBatchHeader header_;
  ByteView wire_;
  bool crc_checked_ = false;
  Bytes decompressed_;
  std::vector<RecordView> records_;
};

// Decodes exactly one batch: `batch` must hold it and nothing more (bytes past
// Length are kTrailingBytes; use split_record_batches for several). Checks the
// magic, Length, the CRC-32C (kBadChecksum), the codec, RecordsCount against
// the bytes present, every record's lengths, and that the records fill the
// section exactly. Error offsets count from the start of `batch`; inside a
// compressed section they count from the start of the decompressed records and
// the field path starts with "decompressed_records".
Decoded<RecordBatchView> decode_record_batch(ByteView batch, const RecordBatchReadOptions& options = {});

// Splits a records field holding several log entries back to back (a Fetch
// response, a log segment) without decoding them. Each entry is
// [int64 offset][int32 length][length bytes] and has its magic at byte 16, so
// legacy messages (magic 0/1) split the same way as v2 batches. A trailing
// entry cut short is legal in a Fetch response (the broker truncates at
// max_bytes) and is reported in `partial`, not as an error; a Produce handler
// should refuse it.
struct RecordBatchSplit {
  std::vector<ByteView> batches;
  ByteView partial;  // the incomplete trailing entry, empty if none
  std::size_t partial_offset = 0;
  bool has_partial() const { return !partial.empty(); }
};
Decoded<RecordBatchSplit> split_record_batches(ByteView records);

}  // namespace pp
