// CRC-32 (IEEE). With PCLMULQDQ (x86-64, checked at run time) the input is
// folded 64 bytes at a time (256 with AVX-512 VPCLMULQDQ, crc_vpclmul.h)
// by carry-less multiplication and reduced with
// Barrett's method (Intel's "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ", the scheme zlib-ng and Chromium's zlib use); shorter
// inputs and the last 0-15 bytes take slicing-by-8. Slicing-by-8 alone costs
// several instructions per byte, the largest single cost per record on the
// legacy path, which folding cuts (docs/BENCHMARKS.md, instructions per
// record).
#include "proxy/records/crc32.h"

#include "proxy/records/crc_slicing.h"
#include "proxy/records/crc_vpclmul.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pp {
namespace {

// Reflected IEEE 802.3 polynomial (0x04C11DB7 bit-reversed).
constexpr std::uint32_t kPoly = 0xEDB88320u;

constexpr crc_slicing::Tables kSlice = crc_slicing::make_tables(kPoly);

// Below this the folding's set-up and reduction cost more than they save.
constexpr std::size_t kFoldMinimum = 64;

#if defined(__x86_64__)

// Constants of the reflected polynomial (bit-reflected, shifted left by one):
// x^(4*128+32) and x^(4*128-32) mod P fold four lanes by 64 bytes,
// x^(128+32) and x^(128-32) mod P fold one lane by 16 bytes, x^64 mod P
// folds 64 bits to 32, then P and its Barrett constant floor(x^64 / P).
constexpr long long kFold4Low = 0x0154442bd4, kFold4High = 0x01c6e41596;
constexpr long long kFold1Low = 0x01751997d0, kFold1High = 0x00ccaa009e;
constexpr long long kFold64 = 0x0163cd6124;
constexpr long long kPolyReflected = 0x01db710641, kBarrettMu = 0x01f7011641;

inline __m128i load16(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// x * k (both 64-bit halves against their constant), plus the next block.
__attribute__((target("pclmul"))) inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i high = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// The 128-bit remainder to the 32-bit CRC register.
__attribute__((target("pclmul,sse4.1"))) std::uint32_t reduce(__m128i x, __m128i k1) {
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  __m128i t = _mm_clmulepi64_si128(x, k1, 0x10);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), t);
  t = _mm_srli_si128(x, 4);
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), _mm_set_epi64x(0, kFold64), 0x00), t);
  const __m128i barrett = _mm_set_epi64x(kBarrettMu, kPolyReflected);
  t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

// Four 16-byte lanes at a time, folded to one: n >= 64, p and n advanced
// past the whole 64-byte blocks.
__attribute__((target("pclmul,sse4.1"))) __m128i fold_four_lanes(std::uint32_t crc, const std::uint8_t*& p,
                                                                 std::size_t& n) {
  __m128i x1 = _mm_xor_si128(load16(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x2 = load16(p + 16);
  __m128i x3 = load16(p + 32);
  __m128i x4 = load16(p + 48);
  p += 64;
  n -= 64;
  const __m128i k4 = _mm_set_epi64x(kFold4High, kFold4Low);
  for (; n >= 64; p += 64, n -= 64) {
    x1 = fold(x1, k4, load16(p));
    x2 = fold(x2, k4, load16(p + 16));
    x3 = fold(x3, k4, load16(p + 32));
    x4 = fold(x4, k4, load16(p + 48));
  }
  const __m128i k1 = _mm_set_epi64x(kFold1High, kFold1Low);
  return fold(fold(fold(x1, k1, x2), k1, x3), k1, x4);
}

// Raw (non-inverted) register; n >= 64 and a multiple of 16. From 256 bytes the
// 64-byte blocks are folded four registers at a time where the CPU has AVX-512
// VPCLMULQDQ (four lanes per instruction instead of one; crc_vpclmul.h).
__attribute__((target("pclmul,sse4.1"))) std::uint32_t folded_raw(std::uint32_t crc, const std::uint8_t* p,
                                                                  std::size_t n) {
  __m128i x1;
  if (n >= crc_vpclmul::kMinBytes && crc_vpclmul::available()) {
    const std::size_t blocks = n & ~(crc_vpclmul::kBlockBytes - 1);
    x1 = crc_vpclmul::fold_to_lane<kPoly>(crc, p, blocks);
    p += blocks;
    n -= blocks;
  } else {
    x1 = fold_four_lanes(crc, p, n);
  }
  const __m128i k1 = _mm_set_epi64x(kFold1High, kFold1Low);
  for (; n >= 16; p += 16, n -= 16) x1 = fold(x1, k1, load16(p));
  return reduce(x1, k1);
}

bool folding_available() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  }();
  return available;
}

#endif

}  // namespace

std::uint32_t crc32_ieee(ByteView data, std::uint32_t crc) {
  std::uint32_t raw = ~crc;
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
#if defined(__x86_64__)
  if (n >= kFoldMinimum && folding_available()) {
    const std::size_t folded = n & ~std::size_t{15};
    raw = folded_raw(raw, p, folded);
    p += folded;
    n -= folded;
  }
#endif
  return ~crc_slicing::update(kSlice, raw, p, n);
}

std::uint32_t crc32_ieee_portable(ByteView data, std::uint32_t crc) {
  return ~crc_slicing::update(kSlice, ~crc, data.data(), data.size());
}

}  // namespace pp
