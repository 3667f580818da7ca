// Which allocator the daemon runs on, and how it keeps the memory it frees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
  kApplied,         // glibc's thresholds set
  kRefused,         // glibc refused a threshold
  kJemalloc,        // the release daemon's allocator, told by malloc_conf to keep freed memory
  kOtherAllocator,  // a sanitizer's allocator, which has no such thresholds
};

// Keeps up to `retained_bytes` of freed heap mapped for reuse, instead of
// returning each freed frame or upstream batch to the kernel and faulting
// fresh, kernel-zeroed pages in for the next one. Call once, before the
// runtime starts.
AllocatorTuning keep_freed_memory_for_reuse(std::size_t retained_bytes);

// jemalloc keeps freed pages for good (its malloc_conf), and a thread that
// frees what another allocated (the spool's reads on the threadpool, the
// loop's batches) leaves them in arenas the next allocation may not reuse.
// When the pages kept but unused exceed `retained_bytes`, returns them all to
// the kernel and says how many bytes that was; 0 otherwise, and always 0 off
// jemalloc (glibc trims by its own thresholds). Costs a stats refresh, so
// call it every few seconds at most, from any one thread.
std::size_t return_freed_memory_over(std::size_t retained_bytes);

// jemalloc's version and how long it keeps freed pages before purging them
// (opt.dirty_decay_ms, -1: for good), for the start-up log; empty version
// when the process does not run on jemalloc.
struct JemallocInfo {
  std::string version;
  std::int64_t dirty_decay_ms = 0;
};
JemallocInfo jemalloc_info();

}  // namespace pp
