// Bounds-checked big-endian cursor over a byte span (Kafka's wire primitives).
// Every read checks the bytes left first; nothing is allocated from a length
// read off the wire before that length is checked against what is present.
#pragma once

#include <cstdint>
#include <cstring>
#include <expected>
#include <optional>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/protocol/decode_error.h"

namespace pp {

template <class T>
using Decoded = std::expected<T, DecodeError>;

class WireReader {
 public:
  explicit WireReader(ByteView data, std::size_t base_offset = 0) : data_(data), base_offset_(base_offset) {}

  std::size_t position() const { return pos_; }
  std::size_t offset() const { return base_offset_ + pos_; }  // for error reports
  std::size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  ByteView rest() const { return data_.subspan(pos_); }

  std::unexpected<DecodeError> fail(DecodeErrorKind kind) const {
    return std::unexpected(DecodeError{kind, offset(), {}});
  }

  Decoded<std::int8_t> read_int8() { return read_be<std::int8_t>(); }
  Decoded<std::int16_t> read_int16() { return read_be<std::int16_t>(); }
  Decoded<std::int32_t> read_int32() { return read_be<std::int32_t>(); }
  Decoded<std::int64_t> read_int64() { return read_be<std::int64_t>(); }
  Decoded<std::uint16_t> read_uint16() { return read_be<std::uint16_t>(); }
  Decoded<std::uint32_t> read_uint32() { return read_be<std::uint32_t>(); }
  Decoded<double> read_float64() {
    auto bits = read_be<std::uint64_t>();
    if (!bits) return std::unexpected(bits.error());
    double d;
    std::memcpy(&d, &*bits, sizeof d);
    return d;
  }
  Decoded<bool> read_bool() {
    auto b = read_int8();
    if (!b) return std::unexpected(b.error());
    return *b != 0;
  }

  // Unsigned LEB128, at most 5 bytes (Kafka's ByteUtils.readUnsignedVarint).
  Decoded<std::uint32_t> read_uvarint() {
    auto v = read_leb128(5);
    if (!v) return std::unexpected(v.error());
    if (*v > 0xffffffffULL) return fail(DecodeErrorKind::kVarintTooLong);
    return static_cast<std::uint32_t>(*v);
  }
  // Zigzag int32, at most 5 bytes.
  Decoded<std::int32_t> read_varint() {
    auto v = read_uvarint();
    if (!v) return std::unexpected(v.error());
    return static_cast<std::int32_t>((*v >> 1) ^ (~(*v & 1) + 1));
  }
  // Zigzag int64, at most 10 bytes.
  Decoded<std::int64_t> read_varlong() {
    auto v = read_leb128(10);
    if (!v) return std::unexpected(v.error());
    return static_cast<std::int64_t>((*v >> 1) ^ (~(*v & 1) + 1));
  }

  // A borrowed view of the next n bytes.
  Decoded<ByteView> read_span(std::size_t n) {
    if (n > remaining()) return fail(DecodeErrorKind::kLengthTooLarge);
    ByteView out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  Decoded<void> skip(std::size_t n) {
    if (n > remaining()) return fail(DecodeErrorKind::kLengthTooLarge);
    pos_ += n;
    return {};
  }

  // Length prefixes. Classic: int16 (strings) or int32 (bytes, arrays), -1 = null.
  // Compact: uvarint(len + 1), 0 = null. Returns nullopt for null; rejects
  // lengths below -1 and lengths the remaining bytes cannot hold.
  Decoded<std::optional<std::size_t>> read_length(bool compact, bool wide) {
    std::int64_t len;
    if (compact) {
      auto v = read_uvarint();
      if (!v) return std::unexpected(v.error());
      len = static_cast<std::int64_t>(*v) - 1;
    } else if (wide) {
      auto v = read_int32();
      if (!v) return std::unexpected(v.error());
      len = *v;
    } else {
      auto v = read_int16();
      if (!v) return std::unexpected(v.error());
      len = *v;
    }
    if (len == -1) return std::optional<std::size_t>{};
    if (len < -1) return fail(DecodeErrorKind::kNegativeLength);
    if (static_cast<std::uint64_t>(len) > remaining()) return fail(DecodeErrorKind::kLengthTooLarge);
    return std::optional<std::size_t>{static_cast<std::size_t>(len)};
  }

 private:
  template <class T>
  Decoded<T> read_be() {
    if (remaining() < sizeof(T)) return fail(DecodeErrorKind::kTruncated);
    using U = std::make_unsigned_t<T>;
    U v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<U>((v << 8) | data_[pos_ + i]);
    pos_ += sizeof(T);
    return static_cast<T>(v);
  }

  Decoded<std::uint64_t> read_leb128(int max_bytes) {
    std::uint64_t value = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (pos_ >= data_.size()) return fail(DecodeErrorKind::kTruncated);
      const std::uint8_t b = data_[pos_++];
      value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) return value;
    }
    return fail(DecodeErrorKind::kVarintTooLong);
  }

  ByteView data_;
  std::size_t pos_ = 0;
  std::size_t base_offset_ = 0;
};

}  // namespace pp
