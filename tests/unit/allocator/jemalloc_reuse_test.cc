// The release daemon runs on jemalloc (daemon/CMakeLists.txt): this binary
// links it the same way and checks what keep_freed_memory_for_reuse promises
// there, that a freed frame's pages serve the next frame without the kernel
// faulting in and zeroing fresh ones.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>

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

}  // namespace
