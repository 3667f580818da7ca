// Writing RecordBatch v2, and re-stamping a built batch's producer state.
// What the upstream pipeline sends: one batch per partition per request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "proxy/base/bytes.h"
#include "proxy/base/wire_frame.h"
#include "proxy/records/compression.h"
#include "proxy/records/record.h"
#include "proxy/records/record_batch.h"

namespace pp {

struct RecordBatchBuildOptions {
  std::int64_t base_offset = 0;              // producers send 0; the broker assigns
  std::int32_t partition_leader_epoch = -1;  // the broker fills it; outside the CRC
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  CompressionCodec compression = CompressionCodec::kNone;
  std::optional<int> compression_level;                       // nullopt: the codec's Kafka default
  TimestampType timestamp_type = TimestampType::kCreateTime;  // producers send CreateTime
  bool transactional = false;
  bool control = false;
};

// Appends records and builds one batch. Records are written once, straight
// into the final buffer (uncompressed) or into a reused scratch buffer that is
// then compressed, so appending a record costs about a memcpy of its bytes.
// BaseTimestamp is the first record's timestamp and MaxTimestamp the largest,
// as Kafka's MemoryRecordsBuilder does; offset deltas run 0..n-1.
class RecordBatchBuilder {
 public:
  // `expected_bytes`: the size the caller expects the batch to reach (at most
  // batch_bytes), reserved up front so appends never reallocate. The built
  // batch keeps that capacity: an estimate far past the records wastes it.
  explicit RecordBatchBuilder(const RecordBatchBuildOptions& options = {}, std::size_t expected_bytes = 0);

  void append(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value,
              std::span<const RecordHeaderView> headers = {});
  // As append, but a value of at least kMinBorrowedValueBytes that `owner`
  // keeps alive is borrowed by an uncompressed batch instead of copied: the
  // socket writes it where it lies (build_frame). A legacy client's
  // messages become v2 records around their values without a copy of them
  // (copying large values costs more than borrowing them; docs/BENCHMARKS.md).
  // A smaller value costs less copied than as two more iovecs and their
  // bookkeeping.
  static constexpr std::size_t kMinBorrowedValueBytes = 512;
  // Whether a batch of `codec` borrows `value` (given an owner): the memory
  // accounting counts ahead only what is copied.
  static bool borrows_value(CompressionCodec codec, const std::optional<ByteView>& value) {
    return codec == CompressionCodec::kNone && value && value->size() >= kMinBorrowedValueBytes;
  }
  void append_borrowing_value(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value,
                              std::span<const RecordHeaderView> headers, const std::shared_ptr<const void>& owner);

  // Takes `count` records already encoded for a batch whose BaseTimestamp is
  // `base_timestamp`, offset deltas 0..count-1 (a client's RecordBatch v2
  // section), copied as they are. Only into an empty builder: the deltas are
  // relative to this batch's start; anything else is a programming error.
  // `records_crc`, when known, is crc32c(records): the batch's CRC is then
  // computed from it and the header, without reading the records again, if
  // they are at least kKnownCrcMinBytes (a join touches none of the bytes; from
  // that size on it costs less than reading them again with the crc32
  // instruction and about as much as with VPCLMULQDQ: micro_bench
  // BM_Crc32cCombine and BM_Crc32cRead, docs/BENCHMARKS.md; smaller sections
  // are read again).
  // `owner`, if given, keeps `records` alive: an uncompressed batch then
  // borrows them instead of copying (build_frame), so a client's v2 records
  // reach the socket without a copy. A compressed batch copies them to
  // compress them.
  static constexpr std::size_t kKnownCrcMinBytes = 512;
  void append_encoded(ByteView records, std::int32_t count, std::int64_t base_timestamp, std::int64_t max_timestamp,
                      std::optional<std::uint32_t> records_crc = std::nullopt,
                      const std::shared_ptr<const void>& owner = nullptr);

  std::int32_t record_count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Uncompressed size of the batch built now: the 61-byte header plus the
  // records. An upper bound of the compressed size, give or take the codec's
  // few bytes of framing for incompressible data.
  std::size_t size_bytes() const { return frame_.own.size() + borrowed_bytes_; }
  // What size_bytes() would be after appending this record.
  std::size_t size_bytes_with(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value,
                              std::span<const RecordHeaderView> headers = {}) const;
  // Size of one encoded record whatever its timestamp and position (Kafka's
  // DefaultRecordBatch.estimateBatchSizeUpperBound, per record).
  static std::size_t record_size_upper_bound(std::optional<std::size_t> key_size, std::optional<std::size_t> value_size,
                                             std::span<const RecordHeaderView> headers = {});

  // The finished batch, CRC included. The builder is then empty again, with
  // the same options, ready for the next batch (its buffers are reused).
  // build_frame: the header and any records written here as its own bytes,
  // borrowed sections and values as slices between them. build: one buffer
  // (the borrowed bytes copied in).
  WireFrame build_frame();
  Bytes build();

  const RecordBatchBuildOptions& options() const { return options_; }

 private:
  void append_record(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value,
                     std::span<const RecordHeaderView> headers, const std::shared_ptr<const void>* value_owner);
  std::size_t record_body_size(std::int64_t timestamp_delta, std::int32_t offset_delta, std::optional<ByteView> key,
                               std::optional<ByteView> value, std::span<const RecordHeaderView> headers) const;
  // `records_as_appended`: `out` (with the borrowed slices at their
  // offsets, if any) holds the records uncompressed, as appended, so a CRC
  // known for their first bytes applies.
  void write_header(std::uint8_t* out, std::size_t total_size, bool records_as_appended) const;
  void reset();

  RecordBatchBuildOptions options_;
  std::size_t expected_bytes_ = 0;
  // own: header placeholder + records, uncompressed, but for the borrowed
  // bytes; borrowed: an encoded section (right after the header) or record
  // values, each slice before the own byte at its `at`.
  WireFrame frame_;
  std::size_t borrowed_bytes_ = 0;
  std::int32_t count_ = 0;
  std::int64_t base_timestamp_ = -1;
  std::int64_t max_timestamp_ = -1;
  // crc32c of the first known_crc_bytes_ bytes of the records (an encoded
  // section appended first), if known.
  std::optional<std::uint32_t> known_crc_;
  std::size_t known_crc_bytes_ = 0;
};

// Re-stamps ProducerId, ProducerEpoch and BaseSequence (bytes 43-60) of a built
// batch and recomputes its CRC, without touching the records: a retry after an
// epoch bump resends the same bytes under the new epoch (Kafka's
// ProducerBatch.resetProducerState / reopenAndRewriteProducerState). `batch`
// must be a whole v2 batch of ours; a shorter buffer is a programming error.
void patch_producer_state(std::span<std::uint8_t> batch, std::int64_t producer_id, std::int16_t producer_epoch,
                          std::int32_t base_sequence);
// The same for a batch built by build_frame: the header is its own bytes;
// the CRC is read over every piece, the borrowed ones left as they are.
void patch_producer_state(WireFrame& batch, std::int64_t producer_id, std::int16_t producer_epoch,
                          std::int32_t base_sequence);

// The sequence `increment` after `sequence`, wrapping from INT32_MAX to 0
// (DefaultRecordBatch.incrementSequence).
constexpr std::int32_t increment_sequence(std::int32_t sequence, std::int32_t increment) {
  if (sequence > INT32_MAX - increment) return increment - (INT32_MAX - sequence) - 1;
  return sequence + increment;
}

// The batch's last sequence: BaseSequence + LastOffsetDelta, wrapping; -1 (no
// sequence) stays -1 (DefaultRecordBatch.lastSequence).
constexpr std::int32_t last_sequence(std::int32_t base_sequence, std::int32_t last_offset_delta) {
  if (base_sequence == -1) return -1;
  return increment_sequence(base_sequence, last_offset_delta);
}

}  // namespace pp
