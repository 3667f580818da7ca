// Internal: Kafka's zigzag varints (ByteUtils.writeVarint/writeVarlong) written
// straight into a pre-sized buffer, and their encoded sizes, so the batch
// builder can size a record before writing it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace pp::detail {

constexpr std::uint32_t zigzag32(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
constexpr std::uint64_t zigzag64(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

constexpr std::size_t uvarint_size(std::uint64_t v) {
  // 7 payload bits per byte; 0 still takes one byte.
  return v == 0 ? 1 : (static_cast<std::size_t>(std::bit_width(v)) + 6) / 7;
}
constexpr std::size_t varint_size(std::int32_t v) {
  return uvarint_size(zigzag32(v));
}
constexpr std::size_t varlong_size(std::int64_t v) {
  return uvarint_size(zigzag64(v));
}

inline std::uint8_t* put_uvarint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}
inline std::uint8_t* put_varint(std::uint8_t* p, std::int32_t v) {
  return put_uvarint(p, zigzag32(v));
}
inline std::uint8_t* put_varlong(std::uint8_t* p, std::int64_t v) {
  return put_uvarint(p, zigzag64(v));
}

}  // namespace pp::detail
