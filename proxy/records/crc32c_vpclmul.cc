// Folding as in Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ" (proxy/records/crc32.cc does it for CRC-32 with 16-byte lanes),
// here with 64-byte registers: one VPCLMULQDQ multiplies four lanes, so four
// registers take 256 bytes per step where the crc32 instruction takes 8 bytes
// a cycle. The last 128 bits need no Barrett reduction: they are congruent to
// the message mod P, so the crc32 instruction over them from a zero register
// gives the CRC (issue 17: the client batch's CRC check was 8.5 % of the
// proxy's samples on the v2 path).
#include "proxy/records/crc32c_vpclmul.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pp::crc32c_vpclmul {

#if defined(__x86_64__)
namespace {

// Reflected Castagnoli polynomial.
constexpr std::uint32_t kPoly = 0x82F63B78u;

// x^n mod P, bit-reflected and shifted left by one: the multiplier that
// carries a 64-bit half of a lane over the folding distance. A lane's low
// half holds the higher powers, so it takes x^(bits + 32), the high half
// x^(bits - 32).
consteval long long x_power(unsigned n) {
  std::uint32_t r = 0x80000000u;  // x^0
  for (unsigned i = 0; i < n; ++i) r = (r & 1) ? (r >> 1) ^ kPoly : r >> 1;
  const std::uint64_t shifted = std::uint64_t{r} << 1;
  return static_cast<long long>(shifted);
}

struct FoldConstant {
  long long low, high;
};
consteval FoldConstant fold_by_bits(unsigned bits) {
  return {x_power(bits + 32), x_power(bits - 32)};
}

constexpr FoldConstant kFold4Registers = fold_by_bits(4 * 512);
constexpr FoldConstant kFold1Register = fold_by_bits(512);
constexpr FoldConstant kFold3Lanes = fold_by_bits(3 * 128);
constexpr FoldConstant kFold2Lanes = fold_by_bits(2 * 128);
constexpr FoldConstant kFold1Lane = fold_by_bits(128);

#define PP_VPCLMUL_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))

PP_VPCLMUL_TARGET inline __m512i broadcast(FoldConstant k) {
  return _mm512_set_epi64(k.high, k.low, k.high, k.low, k.high, k.low, k.high, k.low);
}

PP_VPCLMUL_TARGET inline __m512i load64(const std::uint8_t* p) {
  return _mm512_loadu_si512(p);
}

// Every lane of x carried over the distance k stands for, plus next.
PP_VPCLMUL_TARGET inline __m512i fold(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next,
                                   0x96);  // a ^ b ^ c
}

PP_VPCLMUL_TARGET inline __m128i fold_lane(__m128i x, FoldConstant k, __m128i next) {
  const __m128i kk = _mm_set_epi64x(k.high, k.low);
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, kk, 0x00), _mm_clmulepi64_si128(x, kk, 0x11)), next);
}

}  // namespace

PP_VPCLMUL_TARGET std::uint32_t fold_raw(std::uint32_t raw_crc, const std::uint8_t* p, std::size_t n) {
  // The register joins the message as its first 32 bits.
  __m512i x0 = _mm512_xor_si512(load64(p), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, raw_crc));
  __m512i x1 = load64(p + 64);
  __m512i x2 = load64(p + 128);
  __m512i x3 = load64(p + 192);
  p += 256;
  n -= 256;
  const __m512i k4 = broadcast(kFold4Registers);
  for (; n >= 256; p += 256, n -= 256) {
    x0 = fold(x0, k4, load64(p));
    x1 = fold(x1, k4, load64(p + 64));
    x2 = fold(x2, k4, load64(p + 128));
    x3 = fold(x3, k4, load64(p + 192));
  }
  const __m512i k1 = broadcast(kFold1Register);
  x0 = fold(fold(fold(x0, k1, x1), k1, x2), k1, x3);
  for (; n >= 64; p += 64, n -= 64) x0 = fold(x0, k1, load64(p));

  // (GCC 12 warns of its own undefined vectors in the lane extracts; a
  // store says the same.)
  alignas(64) __m128i lanes[4];
  _mm512_store_si512(lanes, x0);
  __m128i last = fold_lane(lanes[2], kFold1Lane, lanes[3]);
  last = fold_lane(lanes[1], kFold2Lanes, last);
  last = fold_lane(lanes[0], kFold3Lanes, last);
  const std::uint64_t crc = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(last)));
  return static_cast<std::uint32_t>(_mm_crc32_u64(crc, static_cast<std::uint64_t>(_mm_extract_epi64(last, 1))));
}

bool available() {
  static const bool cpu_has_it = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
           __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
  }();
  return cpu_has_it;
}

#undef PP_VPCLMUL_TARGET

#else

bool available() {
  return false;
}
std::uint32_t fold_raw(std::uint32_t raw_crc, const std::uint8_t*, std::size_t) {
  return raw_crc;
}

#endif

}  // namespace pp::crc32c_vpclmul
