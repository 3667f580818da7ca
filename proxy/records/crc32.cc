#include "proxy/records/crc32.h"

#include <zlib.h>

namespace pp {

std::uint32_t crc32_ieee(ByteView data, std::uint32_t crc) {
  // crc32_z takes a size_t length, so no chunking is needed for large inputs.
  return static_cast<std::uint32_t>(crc32_z(crc, data.data(), data.size()));
}

}  // namespace pp
