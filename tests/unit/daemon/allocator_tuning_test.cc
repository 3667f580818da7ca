#include "daemon/allocator_tuning.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>

#include "tests/unit/allocator/frame_block.h"

namespace {

using pp::test::kFrameBytes;

TEST(AllocatorTuning, AFreedFrameStaysInTheHeapForTheNextOne) {
  pp::AllocatorTuning tuning = pp::keep_freed_memory_for_reuse(std::size_t{64} << 20);
  if constexpr (!pp::kGlibcAllocator) {
    EXPECT_EQ(tuning, pp::AllocatorTuning::kOtherAllocator);
    return;
  }
  ASSERT_EQ(tuning, pp::AllocatorTuning::kApplied);

  struct mallinfo2 before = mallinfo2();
  void* frame = std::malloc(kFrameBytes);
  ASSERT_NE(frame, nullptr);
  pp::test::touch_frame(frame);
  struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "an 8 MiB block is its own mapping, unmapped on free";

  std::free(frame);
  struct mallinfo2 freed = mallinfo2();
  EXPECT_EQ(freed.arena, held.arena) << "the heap's top was trimmed back to the kernel";
  EXPECT_GE(freed.fordblks, kFrameBytes);

  void* next = std::malloc(kFrameBytes);
  ASSERT_NE(next, nullptr);
  pp::test::touch_frame(next);
  EXPECT_EQ(mallinfo2().arena, held.arena) << "the next frame did not reuse the freed one";
  std::free(next);
}

}  // namespace
