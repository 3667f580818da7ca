// The logical record shared by both formats: what a RecordBatch v2 record
// (DefaultRecord) or a legacy message (LegacyRecord) carries, as views into
// the bytes it was decoded from.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "proxy/base/bytes.h"

namespace pp {

// Kafka's TimestampType ids (-1 only for magic 0, which has no timestamp).
enum class TimestampType : std::int8_t { kNoTimestamp = -1, kCreateTime = 0, kLogAppendTime = 1 };

// Record headers (KIP-82, magic 2 only): the key is a UTF-8 string and never
// null; the value may be null.
struct RecordHeaderView {
  ByteView key;
  std::optional<ByteView> value;
};

// One record of a RecordBatch v2 (DefaultRecord). Offsets and timestamps are
// deltas from the batch header; RecordBatchView::offset_of / timestamp_of give
// the absolute values.
struct RecordView {
  std::int8_t attributes = 0;  // unused by Kafka, always 0 when written
  std::int64_t timestamp_delta = 0;
  std::int32_t offset_delta = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  std::vector<RecordHeaderView> headers;
};

// Two's-complement arithmetic on peer-supplied offsets and timestamps, as
// Java's long does: base + delta must not be undefined behaviour when a peer
// sends extreme values.
constexpr std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
constexpr std::int64_t wrapping_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

inline ByteView as_bytes(std::string_view s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

}  // namespace pp
