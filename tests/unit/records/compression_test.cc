#include "proxy/records/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <chrono>
#include <random>

#include "proxy/records/lz4_frame_header.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

constexpr CompressionCodec kCodecs[] = {CompressionCodec::kNone, CompressionCodec::kGzip, CompressionCodec::kSnappy,
                                        CompressionCodec::kLz4, CompressionCodec::kZstd};
constexpr CompressionCodec kRealCodecs[] = {CompressionCodec::kGzip, CompressionCodec::kSnappy, CompressionCodec::kLz4,
                                            CompressionCodec::kZstd};

Bytes sample(std::size_t n, std::uint32_t seed) {
  // Text-like: random words from a small vocabulary, so compressible but not
  // trivially.
  static const char* const kWords[] = {"kafka ", "record ",   "batch ",  "offset ", "producer ",
                                       "epoch ", "sequence ", "leader ", "topic ",  "partition "};
  std::mt19937 rng(seed);
  Bytes out;
  out.reserve(n + 16);
  while (out.size() < n) {
    const std::string_view w = kWords[rng() % 10];
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);
  return out;
}

std::string name_of(CompressionCodec c) {
  return std::string(to_string(c));
}

TEST(CompressionCodec, NamesRoundTrip) {
  for (CompressionCodec c : kCodecs) {
    EXPECT_EQ(parse_compression_codec(to_string(c)), c);
    EXPECT_EQ(compression_codec_from_id(static_cast<int>(c)), c);
  }
  EXPECT_EQ(parse_compression_codec("GZIP"), std::nullopt);
  EXPECT_EQ(parse_compression_codec("lz4hc"), std::nullopt);
  EXPECT_EQ(parse_compression_codec(""), std::nullopt);
  EXPECT_EQ(compression_codec_from_id(5), std::nullopt);
  EXPECT_EQ(compression_codec_from_id(-1), std::nullopt);
}

TEST(Compression, RoundTripsEveryCodec) {
  for (CompressionCodec c : kCodecs) {
    for (std::size_t n : {0u, 1u, 100u, 65536u, 65537u, 300000u}) {
      const Bytes input = sample(n, static_cast<std::uint32_t>(n));
      const Bytes packed = compress(c, input);
      auto unpacked = decompress(c, packed, n);
      ASSERT_TRUE(unpacked.has_value()) << name_of(c) << " " << n << ": " << unpacked.error().describe();
      EXPECT_EQ(*unpacked, input) << name_of(c) << " " << n;
      if (c != CompressionCodec::kNone && n >= 65536) {
        EXPECT_LT(packed.size(), n / 2) << name_of(c);
      }
    }
  }
}

TEST(Compression, CompressAppendKeepsPrefix) {
  const Bytes input = sample(5000, 1);
  for (CompressionCodec c : kCodecs) {
    Bytes out = {1, 2, 3};
    compress_append(c, input, out);
    ASSERT_GT(out.size(), 3u);
    EXPECT_EQ(out[0], 1);
    auto unpacked = decompress(c, ByteView(out).subspan(3), 1 << 20);
    ASSERT_TRUE(unpacked.has_value()) << name_of(c);
    EXPECT_EQ(*unpacked, input);
  }
}

TEST(Compression, LevelsAreHonoured) {
  const Bytes input = sample(200000, 2);
  for (CompressionCodec c : {CompressionCodec::kGzip, CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    const Bytes high = compress(c, input, CompressOptions{9, Lz4Framing::kStandard});
    auto unpacked = decompress(c, high, input.size());
    ASSERT_TRUE(unpacked.has_value());
    EXPECT_EQ(*unpacked, input);
  }
}

TEST(Compression, CapIsExact) {
  const Bytes input = sample(100000, 3);
  for (CompressionCodec c : kCodecs) {
    const Bytes packed = compress(c, input);
    EXPECT_TRUE(decompress(c, packed, input.size()).has_value()) << name_of(c);
    auto over = decompress(c, packed, input.size() - 1);
    ASSERT_FALSE(over.has_value()) << name_of(c);
    EXPECT_EQ(over.error().kind, DecodeErrorKind::kTooLarge) << name_of(c);
    EXPECT_EQ(over.error().field, name_of(c));
  }
}

// 100 MB of zeros packs into a few hundred KB; decompressing it under a 1 MB
// cap must stop at the cap, quickly and without growing memory.
TEST(Compression, DecompressionBombStopsAtCap) {
  const Bytes zeros(100u * 1000 * 1000, 0);
  for (CompressionCodec c : kRealCodecs) {
    const Bytes bomb = compress(c, zeros);
    EXPECT_LT(bomb.size(), 6u * 1000 * 1000) << name_of(c);
    const auto start = std::chrono::steady_clock::now();
    auto result = decompress(c, bomb, 1u << 20);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(result.has_value()) << name_of(c);
    EXPECT_EQ(result.error().kind, DecodeErrorKind::kTooLarge) << name_of(c);
    // It stopped early in the input, not after inflating all 100 MB. (Time is
    // only a loose check: sanitizer builds on a loaded CI machine are slow.)
    EXPECT_LT(result.error().offset, bomb.size() / 10) << name_of(c);
    EXPECT_LT(elapsed, std::chrono::seconds(2)) << name_of(c);
  }
}

TEST(Compression, EmptyAndGarbageInputsFail) {
  const Bytes garbage = test::bytes_of("this is not compressed data at all, not even close");
  for (CompressionCodec c : kRealCodecs) {
    EXPECT_FALSE(decompress(c, ByteView{}, 1 << 20).has_value()) << name_of(c);
    auto bad = decompress(c, garbage, 1 << 20);
    ASSERT_FALSE(bad.has_value()) << name_of(c);
    EXPECT_FALSE(bad.error().field.empty());
  }
}

TEST(Compression, EveryTruncationFailsAndCorruptionNeverCrashes) {
  const Bytes input = sample(3000, 4);
  for (CompressionCodec c : kRealCodecs) {
    const Bytes packed = compress(c, input);
    for (std::size_t n = 0; n < packed.size(); ++n) {
      // xerial framing has no end marker: cut at a block boundary (here just
      // after the 16-byte header) it is a valid, shorter stream.
      if (c == CompressionCodec::kSnappy && n == 16) continue;
      auto r = decompress(c, ByteView(packed).first(n), 1 << 20);
      EXPECT_FALSE(r.has_value()) << name_of(c) << " prefix " << n;
    }
    std::mt19937 rng(5);
    for (int i = 0; i < 300; ++i) {
      Bytes corrupt = packed;
      corrupt[rng() % corrupt.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
      auto r = decompress(c, corrupt, 1 << 20);
      if (r.has_value()) {  // snappy has no checksum, so damage can go unseen
        EXPECT_LE(r->size(), 1u << 20);
      }
    }
  }
}

TEST(Compression, TrailingBytesAfterStreamFail) {
  const Bytes input = sample(1000, 6);
  for (CompressionCodec c : {CompressionCodec::kGzip, CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    Bytes packed = compress(c, input);
    packed.push_back(0x55);
    EXPECT_FALSE(decompress(c, packed, 1 << 20).has_value()) << name_of(c);
  }
}

TEST(Gzip, ConcatenatedMembersAreRead) {
  const Bytes a = sample(1000, 7), b = sample(2000, 8);
  Bytes both = compress(CompressionCodec::kGzip, a);
  compress_append(CompressionCodec::kGzip, b, both);
  auto out = decompress(CompressionCodec::kGzip, both, 1 << 20);
  ASSERT_TRUE(out.has_value());
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(*out, expected);
}

TEST(Zstd, ConcatenatedFramesAreRead) {
  const Bytes a = sample(1000, 9), b = sample(2000, 10);
  Bytes both = compress(CompressionCodec::kZstd, a);
  compress_append(CompressionCodec::kZstd, b, both);
  auto out = decompress(CompressionCodec::kZstd, both, 1 << 20);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->size(), 3000u);
}

TEST(Snappy, WritesXerialFramingAndReadsRawToo) {
  const Bytes input = sample(100000, 11);
  const Bytes xerial = compress(CompressionCodec::kSnappy, input);
  const Bytes header = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  ASSERT_GE(xerial.size(), header.size());
  EXPECT_TRUE(std::equal(header.begin(), header.end(), xerial.begin()));
  // A raw block: the first xerial block (32 KiB of input) on its own.
  const std::size_t len = static_cast<std::size_t>(xerial[16]) << 24 | xerial[17] << 16 | xerial[18] << 8 | xerial[19];
  const ByteView raw = ByteView(xerial).subspan(20, len);
  auto out = decompress(CompressionCodec::kSnappy, raw, 1 << 20);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, Bytes(input.begin(), input.begin() + 32768));
  // Header only: no blocks, no bytes.
  auto empty = decompress(CompressionCodec::kSnappy, header, 1 << 20);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(Snappy, BadXerialBlockLengths) {
  Bytes framed = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  Bytes negative = framed;
  negative.insert(negative.end(), {0xff, 0xff, 0xff, 0xfe, 0x00});
  auto r = decompress(CompressionCodec::kSnappy, negative, 1 << 20);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(r.error().offset, 16u);
  Bytes too_long = framed;
  too_long.insert(too_long.end(), {0x00, 0x00, 0x10, 0x00, 0x01});
  r = decompress(CompressionCodec::kSnappy, too_long, 1 << 20);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kLengthTooLarge);
  // A raw block claiming 1 GiB from 6 bytes is refused before any allocation.
  const Bytes claims_huge = {0x80, 0x80, 0x80, 0x80, 0x04, 0x00};
  r = decompress(CompressionCodec::kSnappy, claims_huge, std::size_t{1} << 31);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
}

TEST(Lz4, FramesLookLikeKafkas) {
  const Bytes packed = compress(CompressionCodec::kLz4, sample(1000, 12));
  ASSERT_GT(packed.size(), 7u);
  EXPECT_EQ(packed[0], 0x04);
  EXPECT_EQ(packed[3], 0x18);
  // FLG: version 01, independent blocks, no checksums, no content size.
  EXPECT_EQ(packed[4], 0x60);
  // BD: 64 KiB maximum block size.
  EXPECT_EQ(packed[5], 0x40);
  EXPECT_EQ(packed[6], detail::lz4_header_checksum(packed, 7));
}

// KIP-57: magic-0 LZ4 frames carry a header checksum hashed from the frame
// magic. Our choice (see Lz4Framing): read them the way Kafka's broker does,
// ignoring the HC byte, and only under kKafkaLegacy; a standard read refuses.
TEST(Lz4, LegacyBrokenHeaderChecksum) {
  const Bytes input = sample(5000, 13);
  const Bytes legacy = compress(CompressionCodec::kLz4, input, CompressOptions{std::nullopt, Lz4Framing::kKafkaLegacy});
  const Bytes standard = compress(CompressionCodec::kLz4, input);
  ASSERT_EQ(legacy.size(), standard.size());
  EXPECT_NE(legacy[6], standard[6]);
  EXPECT_EQ(legacy[6], detail::lz4_legacy_header_checksum(legacy, 7));

  auto strict = decompress(CompressionCodec::kLz4, legacy, 1 << 20);
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.error().kind, DecodeErrorKind::kBadChecksum);

  auto lenient = decompress(CompressionCodec::kLz4, legacy, 1 << 20, Lz4Framing::kKafkaLegacy);
  ASSERT_TRUE(lenient.has_value()) << lenient.error().describe();
  EXPECT_EQ(*lenient, input);
  // Kafka ignores the HC for magic 0, so a correct frame passes too, as does
  // any other HC byte.
  auto correct = decompress(CompressionCodec::kLz4, standard, 1 << 20, Lz4Framing::kKafkaLegacy);
  ASSERT_TRUE(correct.has_value());
  EXPECT_EQ(*correct, input);
  Bytes any_hc = legacy;
  any_hc[6] ^= 0x5a;
  EXPECT_TRUE(decompress(CompressionCodec::kLz4, any_hc, 1 << 20, Lz4Framing::kKafkaLegacy).has_value());
  // Only the HC is forgiven: a corrupt block still fails.
  Bytes bad_block = legacy;
  bad_block[10] ^= 0xff;
  bad_block[11] ^= 0xff;
  auto r = decompress(CompressionCodec::kLz4, bad_block, 1 << 20, Lz4Framing::kKafkaLegacy);
  if (r.has_value()) {
    EXPECT_NE(*r, input);
  }
}

TEST(Lz4, LegacyFramingWithContentSizeAndChecksums) {
  const Bytes input = sample(70000, 14);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentSize = input.size();
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  Bytes frame(LZ4F_compressFrameBound(input.size(), &prefs));
  frame.resize(LZ4F_compressFrame(frame.data(), frame.size(), input.data(), input.size(), &prefs));
  ASSERT_EQ(detail::lz4_header_length(frame), 15u);
  frame[14] = detail::lz4_legacy_header_checksum(frame, 15);
  EXPECT_FALSE(decompress(CompressionCodec::kLz4, frame, 1 << 20).has_value());
  auto out = decompress(CompressionCodec::kLz4, frame, 1 << 20, Lz4Framing::kKafkaLegacy);
  ASSERT_TRUE(out.has_value()) << out.error().describe();
  EXPECT_EQ(*out, input);
  // The content checksum is still verified.
  Bytes bad = frame;
  bad[bad.size() - 1] ^= 1;
  auto r = decompress(CompressionCodec::kLz4, bad, 1 << 20, Lz4Framing::kKafkaLegacy);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadChecksum);
}

TEST(None, CopiesUnderTheCap) {
  const Bytes input = sample(10, 15);
  EXPECT_EQ(*decompress(CompressionCodec::kNone, input, 10), input);
  EXPECT_EQ(decompress(CompressionCodec::kNone, input, 9).error().kind, DecodeErrorKind::kTooLarge);
}

}  // namespace
}  // namespace pp
