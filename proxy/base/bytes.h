// Byte containers shared by every codec: owned buffers and borrowed views.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace pp {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

inline bool bytes_equal(ByteView a, ByteView b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace pp
