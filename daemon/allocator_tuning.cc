#include "daemon/allocator_tuning.h"

#include <malloc.h>

#include <algorithm>
#include <limits>

namespace pp {

namespace {

// glibc refuses an mmap threshold above half its largest heap (32 MiB on
// 64-bit). Blocks above it (frames near max_request_bytes) are still mapped
// and unmapped one by one; they are rare.
constexpr std::size_t kLargestHeapBlock = std::size_t{32} << 20;

}  // namespace

AllocatorTuning keep_freed_memory_for_reuse(std::size_t retained_bytes) {
  if constexpr (!kGlibcAllocator) return AllocatorTuning::kOtherAllocator;
  // By default glibc maps blocks from 128 KiB up (raising that bar only as
  // far as the largest block freed so far) and trims the heap's top once
  // twice that bar lies free. A proxy frees a frame or a batch on every
  // acknowledgement and allocates the next at once, so pages went back to
  // the kernel, which zeroed them again on the next write: 17,000-30,000
  // page faults per GB moved (docs/BENCHMARKS.md). With fixed thresholds the
  // freed top of the heap, up to the budget, waits for the next frame.
  auto as_int = [](std::size_t bytes) {
    return static_cast<int>(std::min<std::size_t>(bytes, std::numeric_limits<int>::max()));
  };
  bool mmap_set = mallopt(M_MMAP_THRESHOLD, as_int(kLargestHeapBlock)) == 1;
  bool trim_set = mallopt(M_TRIM_THRESHOLD, as_int(std::max(retained_bytes, kLargestHeapBlock))) == 1;
  return mmap_set && trim_set ? AllocatorTuning::kApplied : AllocatorTuning::kRefused;
}

}  // namespace pp
