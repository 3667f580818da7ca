// Slicing-by-8 for a reflected 32-bit CRC: eight table lookups per 8 input
// bytes. One implementation for CRC-32 (IEEE, MessageSet v0/v1) and the
// portable path of CRC-32C (RecordBatch v2), which differ only in polynomial.
// Internal to proxy/records.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pp::crc_slicing {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

// t[0] is the byte-at-a-time table; t[k][i] is i followed by k zero bytes.
consteval Tables make_tables(std::uint32_t reflected_poly) {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ reflected_poly : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

inline std::uint32_t load_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Works on the raw (non-inverted) register.
inline std::uint32_t update(const Tables& t, std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  while (n >= 8) {
    const std::uint32_t lo = crc ^ load_le32(p);
    const std::uint32_t hi = load_le32(p + 4);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

}  // namespace pp::crc_slicing
