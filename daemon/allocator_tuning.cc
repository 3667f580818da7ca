#include "daemon/allocator_tuning.h"

#include <malloc.h>
#include <sys/types.h>

#include <algorithm>
#include <limits>

// jemalloc's control interface, bound only when the executable links
// jemalloc (the release daemon and its allocator test do, sanitizer builds
// and the other tests do not).
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen)
    __attribute__((weak));

// jemalloc reads this at its first allocation. By default it purges freed
// pages over 10 s (immediately for blocks from 8 MiB), so a steady stream of
// 1 MiB frames and batches would fault in fresh, kernel-zeroed pages over and
// over, where glibc with the thresholds below has none once warm
// (docs/BENCHMARKS.md, "The allocator"). Kept, freed memory stays for the next
// frame or batch, as glibc's heap keeps it; the memory budget bounds the peak
// of what is live, and return_freed_memory_over() what is kept beyond it.
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc's interface is this symbol
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}

namespace pp {

namespace {

// glibc refuses an mmap threshold above half its largest heap (32 MiB on
// 64-bit). Blocks above it (frames near max_request_bytes) are still mapped
// and unmapped one by one; they are rare.
constexpr std::size_t kLargestHeapBlock = std::size_t{32} << 20;

bool runs_on_jemalloc() {
  return mallctl != nullptr;
}

}  // namespace

AllocatorTuning keep_freed_memory_for_reuse(std::size_t retained_bytes) {
  if constexpr (!kGlibcAllocator) return AllocatorTuning::kOtherAllocator;
  // Configured before its first allocation (malloc_conf above).
  if (runs_on_jemalloc()) return AllocatorTuning::kJemalloc;
  // By default glibc maps blocks from 128 KiB up (raising that bar only as
  // far as the largest block freed so far) and trims the heap's top once
  // twice that bar lies free. A proxy frees a frame or a batch on every
  // acknowledgement and allocates the next at once, so by default pages go
  // back to the kernel, which zeroes them again on the next write: page
  // faults on every GB moved (docs/BENCHMARKS.md, "Freed memory kept for
  // reuse"). With fixed thresholds the freed top of the heap, up to the
  // budget, waits for the next frame.
  auto as_int = [](std::size_t bytes) {
    return static_cast<int>(std::min<std::size_t>(bytes, std::numeric_limits<int>::max()));
  };
  bool mmap_set = mallopt(M_MMAP_THRESHOLD, as_int(kLargestHeapBlock)) == 1;
  bool trim_set = mallopt(M_TRIM_THRESHOLD, as_int(std::max(retained_bytes, kLargestHeapBlock))) == 1;
  return mmap_set && trim_set ? AllocatorTuning::kApplied : AllocatorTuning::kRefused;
}

std::size_t return_freed_memory_over(std::size_t retained_bytes) {
  if (!runs_on_jemalloc()) return 0;
  std::uint64_t epoch = 1;
  std::size_t size = sizeof(epoch);
  if (mallctl("epoch", &epoch, &size, &epoch, size) != 0) return 0;
  std::size_t resident = 0;
  std::size_t allocated = 0;
  size = sizeof(std::size_t);
  if (mallctl("stats.resident", &resident, &size, nullptr, 0) != 0) return 0;
  if (mallctl("stats.allocated", &allocated, &size, nullptr, 0) != 0) return 0;
  if (resident <= allocated || resident - allocated <= retained_bytes) return 0;
  // MALLCTL_ARENAS_ALL (4096): every arena, the threadpool threads' too.
  if (mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) != 0) return 0;
  return resident - allocated;
}

JemallocInfo jemalloc_info() {
  JemallocInfo info;
  if (!runs_on_jemalloc()) return info;
  const char* version = nullptr;
  std::size_t size = sizeof(version);
  if (mallctl("version", static_cast<void*>(&version), &size, nullptr, 0) == 0 && version) info.version = version;
  ssize_t decay_ms = 0;
  size = sizeof(decay_ms);
  if (mallctl("opt.dirty_decay_ms", &decay_ms, &size, nullptr, 0) == 0) info.dirty_decay_ms = decay_ms;
  if (info.version.empty()) info.version = "(version unknown)";
  return info;
}

}  // namespace pp
