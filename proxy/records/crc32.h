// CRC-32 (IEEE 802.3), the checksum of legacy messages, magic 0 and 1 (Kafka's
// LegacyRecord.computeChecksum, over Magic..end of the message), slicing-by-8.
#pragma once

#include <cstdint>

#include "proxy/base/bytes.h"

namespace pp {

// CRC-32 of `data`, continuing from a previous result (0 to start).
std::uint32_t crc32_ieee(ByteView data, std::uint32_t crc = 0);

}  // namespace pp
