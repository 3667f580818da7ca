// Legacy MessageSet, magic 0 (Kafka 0.8) and magic 1 (0.10, KIP-32
// timestamps): the records of Produce v0-2. Kafka's LegacyRecord and
// AbstractLegacyRecordBatch; layout in docs/design/PIPELINE.md, section B. The proxy reads
// these from old clients and re-encodes them as RecordBatch v2.
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

// Byte offsets inside one log entry (Records.LOG_OVERHEAD, LegacyRecord).
namespace legacy_layout {
inline constexpr std::size_t kOffset = 0;
inline constexpr std::size_t kMessageSize = 8;
inline constexpr std::size_t kCrc = 12;
inline constexpr std::size_t kMagic = 16;  // the CRC-32 covers from here to the end
inline constexpr std::size_t kAttributes = 17;
inline constexpr std::size_t kTimestamp = 18;  // magic 1 only
inline constexpr std::size_t kLogOverhead = 12;
// Message bytes without key and value: crc, magic, attributes, (timestamp),
// key length, value length (LegacyRecord.RECORD_OVERHEAD_V0 / _V1).
inline constexpr std::size_t kMessageOverheadV0 = 14;
inline constexpr std::size_t kMessageOverheadV1 = 22;
}  // namespace legacy_layout

// Attribute bits of a legacy message: 0-2 codec (no zstd below magic 2),
// 3 timestamp type (magic 1 only).
namespace legacy_attributes {
inline constexpr std::int8_t kCodecMask = 0x07;
inline constexpr std::int8_t kTimestampType = 0x08;
}  // namespace legacy_attributes

// One logical record: a plain top-level message, or one inner message of a
// compressed wrapper (already unwrapped).
struct LegacyRecordView {
  std::int64_t offset = 0;  // absolute for magic-1 wrappers; as sent otherwise
  std::int8_t magic = 0;
  std::int8_t attributes = 0;             // of this message itself
  std::optional<std::int64_t> timestamp;  // nullopt for magic 0
  TimestampType timestamp_type = TimestampType::kNoTimestamp;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  // Codec of the wrapper this record came out of (kNone: top-level message).
  CompressionCodec wrapper_codec = CompressionCodec::kNone;
};

// What to do with an entry cut short at the end of the set.
enum class TrailingPartial : std::uint8_t {
  // Produce: an error (kTruncated). Kafka's log layer silently trims such bytes
  // (UnifiedLog.trimInvalidBytes) and so drops a record the client believes it
  // sent; refusing tells the client instead.
  kReject,
  // Fetch: brokers cut the last message at max_bytes; report it, keep the rest.
  kIgnore,
};

struct MessageSetReadOptions {
  // Cap on all wrappers' decompressed bytes together; over it is kTooLarge.
  std::size_t max_decompressed_bytes = 64 * 1024 * 1024;
  TrailingPartial trailing_partial = TrailingPartial::kReject;
  // When set, decompressed bytes and every message's in-memory form are
  // charged here before they are allocated; over it is kOverBudget.
  DecodeBudget* budget = nullptr;
};

// A decoded set. Views point into the wire bytes or into this object's
// decompressed buffers; move-only so they stay valid.
class MessageSetView {
 public:
  MessageSetView(MessageSetView&&) noexcept = default;
  MessageSetView& operator=(MessageSetView&&) noexcept = default;
  MessageSetView(const MessageSetView&) = delete;
  MessageSetView& operator=(const MessageSetView&) = delete;

  std::span<const LegacyRecordView> records() const { return records_; }
  // With TrailingPartial::kIgnore: where the ignored partial entry starts.
  bool has_trailing_partial() const { return partial_offset_.has_value(); }
  std::optional<std::size_t> trailing_partial_offset() const { return partial_offset_; }

 private:
  MessageSetView() = default;
  friend Decoded<MessageSetView> decode_message_set(ByteView, const MessageSetReadOptions&);
  friend class MessageSetDecoder;

  std::vector<LegacyRecordView> records_;
  std::vector<Bytes> decompressed_;
  std::optional<std::size_t> partial_offset_;
};

// Decodes a whole set: each message's CRC-32 (kBadChecksum), magic (0 or 1,
// else kUnsupported), codec, key and value lengths, and that they fill the
// message exactly. A compressed wrapper is unwrapped one level: inner offsets
// of a magic-1 wrapper are relative and made absolute from the wrapper's offset
// (that of the last inner message, or 0 from some librdkafka versions); a
// compressed message inside a wrapper is an error. Error offsets count from the
// start of `set`; inside a wrapper they count from the start of its
// decompressed bytes and the field path says "decompressed".
Decoded<MessageSetView> decode_message_set(ByteView set, const MessageSetReadOptions& options = {});

}  // namespace pp
