// The release daemon runs on jemalloc (daemon/CMakeLists.txt): this binary
// links it the same way and checks what keep_freed_memory_for_reuse promises
// there, that a freed frame's pages serve the next frame without the kernel
// faulting in and zeroing fresh ones.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "daemon/allocator_tuning.h"
#include "tests/unit/allocator/frame_block.h"

namespace {

using pp::test::kFrameBytes;
constexpr long kFramePages = static_cast<long>(kFrameBytes / 4096);

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST(JemallocReuse, TheDaemonsTuningRecognisesJemalloc) {
  EXPECT_EQ(pp::keep_freed_memory_for_reuse(std::size_t{64} << 20), pp::AllocatorTuning::kJemalloc);
  const pp::JemallocInfo info = pp::jemalloc_info();
  EXPECT_EQ(info.version.rfind("5.", 0), 0U) << info.version;
  EXPECT_EQ(info.dirty_decay_ms, -1) << "jemalloc did not read the daemon's malloc_conf: freed pages are purged";
}

TEST(JemallocReuse, AFreedFrameServesTheNextWithoutFreshPages) {
  void* frame = std::malloc(kFrameBytes);
  ASSERT_NE(frame, nullptr);
  const long before_first = minor_faults();
  pp::test::touch_frame(frame);
  const long first = minor_faults() - before_first;
  // Fresh memory: the kernel faults each page in on first touch (or in
  // huge-page steps, fewer faults, when transparent huge pages apply).
  ASSERT_GT(first, 0) << "the first frame was not fresh memory; the check below proves nothing";
  std::free(frame);

  void* next = std::malloc(kFrameBytes);
  ASSERT_NE(next, nullptr);
  const long before_next = minor_faults();
  pp::test::touch_frame(next);
  const long again = minor_faults() - before_next;
  std::free(next);
  EXPECT_LT(again, kFramePages / 64) << "the next frame faulted in fresh pages (" << first << " for the first)";
}

long resident_pages() {
  long size = 0;
  long resident = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return -1;
  const int read = std::fscanf(statm, "%ld %ld", &size, &resident);
  std::fclose(statm);
  return read == 2 ? resident : -1;
}

// Freed by another thread than the one that allocated, as the spool's
// threadpool reads are: pages kept in several arenas.
std::vector<void*> allocate_and_touch(std::size_t blocks, std::size_t block_bytes) {
  std::vector<void*> out;
  std::thread([&] {
    for (std::size_t i = 0; i < blocks; ++i) {
      void* p = std::malloc(block_bytes);
      std::memset(p, 0x5a, block_bytes);
      out.push_back(p);
    }
  }).join();
  return out;
}

TEST(JemallocReuse, FreedMemoryBeyondWhatIsRetainedGoesBackToTheKernel) {
  constexpr std::size_t kBlock = std::size_t{64} << 10;
  constexpr std::size_t kBlocks = 1024;  // 64 MiB
  std::vector<void*> blocks = allocate_and_touch(kBlocks, kBlock);
  for (void* p : blocks) std::free(p);
  const long kept = resident_pages();
  // 64 MiB freed and kept: under a 1 GiB allowance nothing is returned.
  EXPECT_EQ(pp::return_freed_memory_over(std::size_t{1} << 30), 0U);
  EXPECT_GT(resident_pages(), kept - 1024) << "pages were returned under the allowance";
  const std::size_t returned = pp::return_freed_memory_over(std::size_t{8} << 20);
  EXPECT_GE(returned, std::size_t{56} << 20);
  const long after = resident_pages();
  EXPECT_LT(after, kept - static_cast<long>((std::size_t{48} << 20) / 4096))
      << "resident pages " << kept << " before, " << after << " after";
  EXPECT_EQ(pp::return_freed_memory_over(std::size_t{8} << 20), 0U) << "nothing left to return";
}

}  // namespace
