// How the daemon asks glibc's allocator to keep the memory it frees.
#pragma once

#include <cstddef>

// ASan's allocator replaces glibc's and ignores mallopt; clang 16 defines no
// __SANITIZE_ADDRESS__, only the feature test.
#if defined(__SANITIZE_ADDRESS__)
#define PP_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PP_SANITIZER_ALLOCATOR 1
#endif
#endif

namespace pp {

#if defined(PP_SANITIZER_ALLOCATOR)
inline constexpr bool kGlibcAllocator = false;
#else
inline constexpr bool kGlibcAllocator = true;
#endif

enum class AllocatorTuning {
  kApplied,
  kRefused,         // glibc refused a threshold
  kOtherAllocator,  // a sanitizer's allocator, which has no such thresholds
};

// Keeps up to `retained_bytes` of freed heap mapped for reuse, instead of
// returning each freed frame or upstream batch to the kernel and faulting
// fresh, kernel-zeroed pages in for the next one. Call once, before the
// runtime starts.
AllocatorTuning keep_freed_memory_for_reuse(std::size_t retained_bytes);

}  // namespace pp
