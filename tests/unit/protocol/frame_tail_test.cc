// Issue 17: a frame's bytes read straight into its buffer (writable_tail()
// and commit()) must reassemble exactly as append() does, and a peer
// announcing a large frame must not make the reader allocate it up front.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "proxy/protocol/frame.h"

namespace pp {
namespace {

Bytes body_of(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 7);
  return out;
}

struct Stream {
  std::vector<Bytes> bodies;
  Bytes wire;
};

Stream stream_of(const std::vector<std::size_t>& sizes) {
  Stream s;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    s.bodies.push_back(body_of(sizes[i], static_cast<std::uint8_t>(i + 1)));
    const Bytes f = frame(s.bodies.back());
    s.wire.insert(s.wire.end(), f.begin(), f.end());
  }
  return s;
}

Bytes prefix_of(std::uint32_t size) {
  return {static_cast<std::uint8_t>(size >> 24), static_cast<std::uint8_t>(size >> 16),
          static_cast<std::uint8_t>(size >> 8), static_cast<std::uint8_t>(size)};
}

// A socket as the client session drives it: into the tail when there is
// one (each read taking at most `read_max`, and first scribbling over the
// whole tail, as a read that fails or falls short may), else through
// append() in reads of `read_max`.
void feed(FrameReader& reader, ByteView rest, std::size_t read_max) {
  while (!rest.empty()) {
    const std::span<std::uint8_t> tail = reader.writable_tail();
    const std::size_t n = std::min({rest.size(), read_max, tail.empty() ? rest.size() : tail.size()});
    if (tail.empty()) {
      ASSERT_TRUE(reader.append(rest.first(n)));
    } else {
      std::fill(tail.begin(), tail.end(), std::uint8_t{0xEE});
      std::copy_n(rest.begin(), n, tail.begin());
      reader.commit(n);
    }
    rest = rest.subspan(n);
  }
}

void expect_frames(FrameReader& reader, const std::vector<Bytes>& bodies) {
  for (const Bytes& want : bodies) {
    auto got = reader.pop();
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(bytes_equal(*got, want)) << "a frame of " << want.size() << " bytes";
    EXPECT_EQ(got->capacity(), got->size()) << "the budget charges a frame's capacity";
  }
  EXPECT_FALSE(reader.pop().has_value());
  EXPECT_EQ(reader.buffered_bytes(), 0u);
  EXPECT_FALSE(reader.in_partial_frame());
}

TEST(FrameReaderTail, ReassemblesWhereverTheFirstReadEnds) {
  const Stream s = stream_of({0, 1, 37, 300, 5});
  for (std::size_t cut = 0; cut <= s.wire.size(); ++cut) {
    for (const std::size_t read_max : {std::size_t{1}, std::size_t{7}, s.wire.size()}) {
      FrameReader reader(1024);
      ASSERT_TRUE(reader.append(ByteView(s.wire).first(cut)));
      feed(reader, ByteView(s.wire).subspan(cut), read_max);
      expect_frames(reader, s.bodies);
    }
  }
}

TEST(FrameReaderTail, TailIsTheRestOfTheFrameOnly) {
  FrameReader reader(1024);
  EXPECT_TRUE(reader.writable_tail().empty()) << "no prefix read yet";
  ASSERT_TRUE(reader.append(Bytes{0, 0}));
  EXPECT_TRUE(reader.writable_tail().empty()) << "half a prefix";
  ASSERT_TRUE(reader.append(Bytes{0, 10, 1, 2, 3}));
  EXPECT_EQ(reader.writable_tail().size(), 7u);
  EXPECT_EQ(reader.partial_bytes(), 3u);
  EXPECT_EQ(reader.partial_remaining(), 7u);
  reader.commit(2);
  EXPECT_EQ(reader.writable_tail().size(), 5u);
  EXPECT_EQ(reader.partial_remaining(), 5u);
  EXPECT_EQ(reader.buffered_bytes(), 5u);
  EXPECT_EQ(reader.stream_offset(), 4u + 5u);
}

TEST(FrameReaderTail, PrefixAndSeveralFramesInOneRead) {
  const Stream s = stream_of({3, 0, 100, 200000});
  FrameReader reader(1 << 20);
  const std::size_t first_read = s.wire.size() - 150000;  // three frames and part of the fourth
  ASSERT_TRUE(reader.append(ByteView(s.wire).first(first_read)));
  EXPECT_EQ(reader.ready_frames(), 3u);
  EXPECT_EQ(reader.frames_started(), 4u);
  EXPECT_EQ(reader.partial_remaining(), 150000u);
  feed(reader, ByteView(s.wire).subspan(first_read), 64 * 1024);
  EXPECT_EQ(reader.frames_started(), 4u);
  expect_frames(reader, s.bodies);
}

TEST(FrameReaderTail, LargeFramePastTheFirstReserve) {
  const std::size_t size = FrameReader::kFirstReserveBytes * 5 / 2 + 3;
  const Stream s = stream_of({size, 10});
  FrameReader reader(size);
  feed(reader, s.wire, FrameReader::kTailStepBytes);
  expect_frames(reader, s.bodies);
}

TEST(FrameReaderTail, AnnouncedSizeIsNotTouchedUpFront) {
  const std::uint32_t announced = 90u << 20;
  FrameReader reader(100u << 20);
  ASSERT_TRUE(reader.append(prefix_of(announced)));
  Bytes few(10, 1);
  ASSERT_TRUE(reader.append(few));
  EXPECT_EQ(reader.partial_touched(), 10u);
  const std::span<std::uint8_t> tail = reader.writable_tail();
  EXPECT_EQ(tail.size(), FrameReader::kTailStepBytes) << "one step, not the announced rest";
  reader.commit(5);
  EXPECT_EQ(reader.partial_remaining(), announced - 15);
  // A peer trickling on: what is touched stays within one tail step of what
  // it sent (the rest of the announced size is address space only).
  std::size_t sent = 15;
  while (sent < 3 * FrameReader::kTailStepBytes) {
    const std::span<std::uint8_t> t = reader.writable_tail();
    ASSERT_FALSE(t.empty());
    const std::size_t n = std::min<std::size_t>(t.size(), 1000);
    reader.commit(n);
    sent += n;
    EXPECT_LE(reader.partial_touched(), sent + FrameReader::kTailStepBytes);
  }
  EXPECT_EQ(reader.partial_bytes(), sent);
}

TEST(FrameReaderTail, AppendOverwritesAnUncommittedTail) {
  FrameReader reader(64);
  ASSERT_TRUE(reader.append(prefix_of(4)));
  const std::span<std::uint8_t> tail = reader.writable_tail();
  ASSERT_EQ(tail.size(), 4u);
  std::fill(tail.begin(), tail.end(), std::uint8_t{0xEE});  // a read that failed
  ASSERT_TRUE(reader.append(Bytes{1, 2, 3, 4, 0, 0, 0, 1, 9}));
  auto first = reader.pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(bytes_equal(*first, Bytes{1, 2, 3, 4}));
  EXPECT_EQ(first->capacity(), 4u);
  auto second = reader.pop();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(bytes_equal(*second, Bytes{9}));
}

TEST(FrameReaderTail, OverMaxPrefixStillRefused) {
  FrameReader reader(100);
  ASSERT_TRUE(reader.append(prefix_of(20)));
  const std::span<std::uint8_t> tail = reader.writable_tail();
  ASSERT_EQ(tail.size(), 20u);
  reader.commit(20);  // the frame arrived through its tail
  auto res = reader.append(prefix_of(101));
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kTooLarge);
  EXPECT_EQ(res.error().offset, 24u);
  EXPECT_TRUE(reader.writable_tail().empty()) << "nothing is read for a refused frame";
  EXPECT_EQ(reader.ready_frames(), 1u);
  EXPECT_EQ(reader.buffered_bytes(), 20u);
}

}  // namespace
}  // namespace pp
