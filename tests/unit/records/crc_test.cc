#include <gtest/gtest.h>

#include <random>

#include "proxy/records/crc32.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/lz4_frame_header.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

using test::bytes_of;

Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

TEST(Crc32c, KnownVectors) {
  // The CRC catalogue's check value and RFC 3720 (iSCSI) B.4 test patterns.
  const Bytes check = bytes_of("123456789");
  const Bytes zeros(32, 0x00);
  const Bytes ones(32, 0xff);
  Bytes ascending(32);
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<std::uint8_t>(i);
  struct Case {
    const Bytes* data;
    std::uint32_t crc;
  } cases[] = {{&check, 0xE3069283u}, {&zeros, 0x8A9136AAu}, {&ones, 0x62A8AB43u}, {&ascending, 0x46DD794Eu}};
  for (const Case& c : cases) {
    EXPECT_EQ(crc32c(*c.data), c.crc);
    EXPECT_EQ(crc32c_portable(*c.data), c.crc);
    if (crc32c_hardware_available()) {
      EXPECT_EQ(crc32c_hardware(*c.data), c.crc);
    }
    if (crc32c_folding_available()) {
      EXPECT_EQ(crc32c_folding(*c.data), c.crc);
    }
  }
  EXPECT_EQ(crc32c(ByteView{}), 0u);
  EXPECT_EQ(crc32c_portable(ByteView{}), 0u);
}

TEST(Crc32c, ImplementationIsNamed) {
  const std::string_view name = crc32c_implementation();
  EXPECT_TRUE(name == "avx512-vpclmulqdq" || name == "sse4.2" || name == "portable") << name;
  EXPECT_EQ(name == "avx512-vpclmulqdq", crc32c_folding_available());
  EXPECT_EQ(name == "sse4.2", crc32c_hardware_available() && !crc32c_folding_available());
}

// The folding path against the portable tables: every alignment, every
// length around the 256-byte start and the 64-byte blocks, lengths that take
// the four-register loop several times, continuation from a previous CRC, and
// the inputs whose lanes cancel (all zeros, all ones).
TEST(Crc32c, FoldingAndPortableAgreeOnEveryAlignmentAndLength) {
  if (!crc32c_folding_available()) GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
  const Bytes data = random_bytes(70000, 43);
  for (std::size_t start = 0; start < 64; start += (start < 16 ? 1 : 7)) {
    for (std::size_t len = 0; len < 1400; len += (len < 600 ? 1 : 11)) {
      const ByteView v = ByteView(data).subspan(start, len);
      ASSERT_EQ(crc32c_folding(v), crc32c_portable(v)) << start << "+" << len;
      ASSERT_EQ(crc32c_folding(v, 0x9abcdef0u), crc32c_portable(v, 0x9abcdef0u)) << start << "+" << len;
    }
  }
  for (std::size_t len : {4095u, 4096u, 4097u, 16384u + 63u, 65536u, 69999u}) {
    const ByteView v = ByteView(data).subspan(1, len);
    ASSERT_EQ(crc32c_folding(v), crc32c_portable(v)) << len;
    ASSERT_EQ(crc32c(v), crc32c_portable(v)) << len;
  }
  for (std::uint8_t fill : {std::uint8_t{0x00}, std::uint8_t{0xff}}) {
    const Bytes same(4096 + 17, fill);
    EXPECT_EQ(crc32c_folding(same), crc32c_portable(same)) << int{fill};
  }
}

TEST(Crc32c, HardwareAndPortableAgreeOnUnalignedOddLengths) {
  if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  const Bytes data = random_bytes(3 * 8192 * 2 + 3 * 256 * 3 + 123, 42);
  for (std::size_t start = 0; start < 16; ++start) {
    for (std::size_t len = 0; len < 1100; len += (len < 80 ? 1 : 37)) {
      const ByteView v = ByteView(data).subspan(start, len);
      ASSERT_EQ(crc32c_hardware(v), crc32c_portable(v)) << start << "+" << len;
    }
  }
  // Lengths around the three-stream block boundaries (3 x 256, 3 x 8192).
  for (std::size_t len : {767u, 768u, 769u, 24575u, 24576u, 24577u, 25344u, 49152u + 800u}) {
    for (std::size_t start : {0u, 1u, 7u}) {
      const ByteView v = ByteView(data).subspan(start, len);
      ASSERT_EQ(crc32c_hardware(v), crc32c_portable(v)) << start << "+" << len;
      ASSERT_EQ(crc32c(v), crc32c_portable(v));
    }
  }
}

TEST(Crc32c, ExtendsAcrossSplits) {
  const Bytes data = random_bytes(70000, 7);
  const std::uint32_t whole = crc32c_portable(data);
  for (std::size_t cut : {0u, 1u, 9u, 255u, 4096u, 30000u, 69999u, 70000u}) {
    const ByteView a = ByteView(data).first(cut);
    const ByteView b = ByteView(data).subspan(cut);
    EXPECT_EQ(crc32c(b, crc32c(a)), whole) << cut;
    EXPECT_EQ(crc32c_portable(b, crc32c_portable(a)), whole) << cut;
  }
}

// Joining two CRCs without the bytes, and taking the first part back out:
// the second identity is what a forwarded client batch relies on.
TEST(Crc32c, CombinesAndSplitsWithoutTheBytes) {
  const Bytes data = random_bytes(70000, 11);
  const std::uint32_t whole = crc32c_portable(data);
  for (std::size_t cut : {0u, 1u, 7u, 8u, 40u, 61u, 255u, 4096u, 30001u, 69999u, 70000u}) {
    const ByteView a = ByteView(data).first(cut);
    const ByteView b = ByteView(data).subspan(cut);
    EXPECT_EQ(crc32c_combine(crc32c_portable(a), crc32c_portable(b), b.size()), whole) << cut;
    EXPECT_EQ(crc32c_combine(crc32c_portable(a), whole, b.size()), crc32c_portable(b)) << cut;
    EXPECT_EQ(crc32c_combine_portable(crc32c_portable(a), crc32c_portable(b), b.size()), whole) << cut;
    EXPECT_EQ(crc32c_combine_portable(crc32c_portable(a), whole, b.size()), crc32c_portable(b)) << cut;
  }
  // Both multiplications agree on every length a 64-bit size can take a
  // bit of, and on arbitrary CRCs.
  for (int bit = 0; bit < 64; ++bit) {
    const std::size_t size = (std::size_t{1} << bit) | (bit * 2654435761u);
    const std::uint32_t crc_a = 0x9e3779b9u * static_cast<std::uint32_t>(bit + 1);
    EXPECT_EQ(crc32c_combine(crc_a, ~crc_a, size), crc32c_combine_portable(crc_a, ~crc_a, size)) << bit;
  }
  // Lengths far past any batch: every bit of a 64-bit length takes the
  // power table's path, and zero bytes appended one way or the other agree.
  const Bytes zeros(1 << 20, 0);
  const std::uint32_t crc_a = crc32c_portable(ByteView(data).first(100));
  EXPECT_EQ(crc32c_combine(crc_a, crc32c_portable(zeros), zeros.size()), crc32c_portable(zeros, crc_a));
  EXPECT_EQ(crc32c_combine(0, 0, SIZE_MAX), 0u);
  EXPECT_EQ(crc32c_combine(crc_a, 0, 0), crc_a);
}

// The definition, one bit at a time, against the sliced implementation at
// every length around its 8-byte steps and every starting alignment.
TEST(Crc32, IeeeMatchesTheBitwiseDefinition) {
  const auto bitwise = [](ByteView data) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::uint8_t b : data) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
  };
  const Bytes data = random_bytes(300, 7);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t n = 0; n + offset <= 80; ++n) {
      const ByteView piece = ByteView(data).subspan(offset, n);
      ASSERT_EQ(crc32_ieee(piece), bitwise(piece)) << "offset " << offset << ", " << n << " bytes";
    }
  }
  EXPECT_EQ(crc32_ieee(data), bitwise(data));
}

// The folding path (64 bytes and up where the CPU has PCLMULQDQ, from 256
// four 64-byte registers where it has AVX-512 VPCLMULQDQ, slicing for the
// last 0-15) against slicing alone: every alignment, every length around
// the 16- and 64-byte steps, and continuation from a previous CRC.
TEST(Crc32, IeeeFoldingMatchesSlicing) {
  const Bytes data = random_bytes(5000, 11);
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t n = 0; n + offset <= 700; n += (n < 300 ? 1 : 13)) {
      const ByteView piece = ByteView(data).subspan(offset, n);
      ASSERT_EQ(crc32_ieee(piece), crc32_ieee_portable(piece)) << "offset " << offset << ", " << n << " bytes";
      ASSERT_EQ(crc32_ieee(piece, 0x12345678u), crc32_ieee_portable(piece, 0x12345678u)) << offset << "+" << n;
    }
  }
  EXPECT_EQ(crc32_ieee(data), crc32_ieee_portable(data));
  // Lengths that take the four-register AVX-512 loop several times (where
  // the CPU has VPCLMULQDQ), then 64-byte blocks, 16-byte lanes and slicing.
  for (std::size_t n : {1024u, 1024u + 64u + 16u + 5u, 4095u, 4096u + 192u + 48u + 15u}) {
    for (std::size_t offset : {0u, 3u}) {
      const ByteView piece = ByteView(data).subspan(offset, n);
      ASSERT_EQ(crc32_ieee(piece), crc32_ieee_portable(piece)) << offset << "+" << n;
      ASSERT_EQ(crc32_ieee(piece, 0x12345678u), crc32_ieee_portable(piece, 0x12345678u)) << offset << "+" << n;
    }
  }
  const Bytes zeros(256, 0x00);
  const Bytes ones(256, 0xff);
  EXPECT_EQ(crc32_ieee(zeros), crc32_ieee_portable(zeros));
  EXPECT_EQ(crc32_ieee(ones), crc32_ieee_portable(ones));
}

TEST(Crc32, IeeeKnownVectors) {
  EXPECT_EQ(crc32_ieee(bytes_of("123456789")), 0xCBF43926u);
  EXPECT_EQ(crc32_ieee_portable(bytes_of("123456789")), 0xCBF43926u);
  // Long enough for the folding path: zlib.crc32(bytes(range(256))).
  Bytes ascending(256);
  for (int i = 0; i < 256; ++i) ascending[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(crc32_ieee(ascending), 0x29058C73u);
  EXPECT_EQ(crc32_ieee(ByteView{}), 0u);
  const Bytes data = random_bytes(1000, 3);
  EXPECT_EQ(crc32_ieee(ByteView(data).subspan(500), crc32_ieee(ByteView(data).first(500))), crc32_ieee(data));
}

TEST(XxHash32, KnownVectors) {
  // Reference values of xxHash's XXH32 (seed 0), also what python3-xxhash gives.
  EXPECT_EQ(detail::xxh32(ByteView{}), 0x02CC5D05u);
  EXPECT_EQ(detail::xxh32(bytes_of("a")), 0x550D7456u);
  EXPECT_EQ(detail::xxh32(bytes_of("abc")), 0x32D153FFu);
  EXPECT_EQ(detail::xxh32(bytes_of("Nobody inspects the spammish repetition")), 0xE2293B2Fu);
}

}  // namespace
}  // namespace pp
