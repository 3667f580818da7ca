// The record decoder for well-formed records: a raw cursor and inline varints
// instead of a WireReader returning std::expected per field, and no error
// built, since a record it refuses is decoded again by the checked reader
// (record_batch_reader.cc), which owns every error.
#include "proxy/records/record_fast_path.h"

#include <cstddef>
#include <optional>

namespace pp::detail {
namespace {

// The smallest header: key length and value length, one byte each.
constexpr std::size_t kMinHeaderSize = 2;

std::size_t bytes_left(const std::uint8_t* p, const std::uint8_t* end) {
  return static_cast<std::size_t>(end - p);
}

// WireReader::read_leb128, bit for bit: a 10th varlong byte adds only its
// lowest bit, and non-canonical encodings (0x80 0x00) are accepted, as by
// Kafka's ByteUtils.
template <int kMaxBytes>
bool take_leb128(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& value) {
  std::uint64_t accumulated = 0;
  for (int i = 0; i < kMaxBytes; ++i) {
    if (p == end) return false;
    const std::uint8_t b = *p++;
    accumulated |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      value = accumulated;
      return true;
    }
  }
  return false;
}

// WireReader::read_varint: at most 5 bytes, and the value must fit 32 bits.
bool take_varint(const std::uint8_t*& p, const std::uint8_t* end, std::int32_t& value) {
  std::uint64_t raw = 0;
  if (p != end && *p < 0x80) {
    raw = *p++;  // most lengths and deltas of a small record
  } else if (!take_leb128<5>(p, end, raw) || raw > 0xffffffffULL) {
    return false;
  }
  const auto zigzag = static_cast<std::uint32_t>(raw);
  value = static_cast<std::int32_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
  return true;
}

bool take_varlong(const std::uint8_t*& p, const std::uint8_t* end, std::int64_t& value) {
  std::uint64_t zigzag = 0;
  if (!take_leb128<10>(p, end, zigzag)) return false;
  value = static_cast<std::int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
  return true;
}

// A varint length then that many bytes; -1 is null, below -1 is refused.
bool take_nullable_bytes(const std::uint8_t*& p, const std::uint8_t* end, std::optional<ByteView>& bytes) {
  std::int32_t length = 0;
  if (!take_varint(p, end, length) || length < -1) return false;
  if (length == -1) {
    bytes.reset();
    return true;
  }
  const auto size = static_cast<std::size_t>(length);
  if (size > bytes_left(p, end)) return false;
  bytes.emplace(p, size);
  p += size;
  return true;
}

}  // namespace

const std::uint8_t* read_record_fast(const std::uint8_t* record, const std::uint8_t* end, std::vector<RecordView>& out,
                                     DecodeBudget* budget) {
  const std::uint8_t* p = record;
  std::int32_t length = 0;
  if (!take_varint(p, end, length) || length < 0 || static_cast<std::size_t>(length) > bytes_left(p, end)) {
    return nullptr;
  }
  // Every field must end within Length, as the checked reader's sub-reader does.
  const std::uint8_t* const record_end = p + length;
  if (p == record_end) return nullptr;
  const auto attributes = static_cast<std::int8_t>(*p++);
  std::int64_t timestamp_delta = 0;
  std::int32_t offset_delta = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  std::int32_t header_count = 0;
  if (!take_varlong(p, record_end, timestamp_delta) || !take_varint(p, record_end, offset_delta) ||
      !take_nullable_bytes(p, record_end, key) || !take_nullable_bytes(p, record_end, value) ||
      !take_varint(p, record_end, header_count) || header_count < 0 ||
      static_cast<std::size_t>(header_count) > bytes_left(p, record_end) / kMinHeaderSize) {
    return nullptr;
  }
  // The checked reader charges the headers before it reads them; a header it
  // then refuses must not leave this attempt's charge behind for it to repeat.
  const DecodeBudget budget_before = budget ? *budget : DecodeBudget(0);
  if (budget && !budget->take(static_cast<std::size_t>(header_count), sizeof(RecordHeaderView))) return nullptr;
  RecordView& decoded = out.emplace_back(attributes, timestamp_delta, offset_delta, key, value);
  const auto refuse = [&out, budget, &budget_before]() -> const std::uint8_t* {
    out.pop_back();
    if (budget) *budget = budget_before;
    return nullptr;
  };
  decoded.headers.reserve(static_cast<std::size_t>(header_count));
  for (std::int32_t i = 0; i < header_count; ++i) {
    std::optional<ByteView> header_key;
    std::optional<ByteView> header_value;
    // Header keys are never null.
    if (!take_nullable_bytes(p, record_end, header_key) || !header_key ||
        !take_nullable_bytes(p, record_end, header_value)) {
      return refuse();
    }
    decoded.headers.push_back(RecordHeaderView{*header_key, header_value});
  }
  if (p != record_end) return refuse();
  return p;
}

}  // namespace pp::detail
