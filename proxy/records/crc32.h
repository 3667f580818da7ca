// CRC-32 (IEEE 802.3), the checksum of legacy messages, magic 0 and 1 (Kafka's
// LegacyRecord.computeChecksum, over Magic..end of the message): carry-less
// multiplication folding where the CPU has PCLMULQDQ, else slicing-by-8.
#pragma once

#include <cstdint>

#include "proxy/base/bytes.h"

namespace pp {

// CRC-32 of `data`, continuing from a previous result (0 to start).
std::uint32_t crc32_ieee(ByteView data, std::uint32_t crc = 0);
// The same by slicing-by-8 alone, whatever the CPU (tests compare the two).
std::uint32_t crc32_ieee_portable(ByteView data, std::uint32_t crc = 0);

}  // namespace pp
