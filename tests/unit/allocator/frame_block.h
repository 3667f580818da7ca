// A frame-sized block as the allocator tests use it: written whole, so its
// pages are faulted in, and kept from being folded away.
#pragma once

#include <cstddef>
#include <cstring>

namespace pp::test {

inline constexpr std::size_t kFrameBytes = std::size_t{8} << 20;

// Keeps the compiler from folding a malloc/free pair away.
inline void touch_frame(void* block) {
  std::memset(block, 1, kFrameBytes);
  asm volatile("" : : "r"(block) : "memory");
}

}  // namespace pp::test
