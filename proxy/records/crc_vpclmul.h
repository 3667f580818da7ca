// A reflected CRC-32 folded 256 bytes a step with AVX-512 VPCLMULQDQ, for any
// polynomial: internal to proxy/records (crc32c.cc and crc32.cc pick it at
// run time when the CPU has it and finish the remainder their own way).
//
// Folding as in Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ" (crc32.cc's 16-byte lanes), with 64-byte registers: one
// VPCLMULQDQ multiplies four lanes, so four registers take 256 bytes per step
// where the crc32 instruction takes 8 bytes a cycle (the client batch's
// CRC-32C check on the v2 path and the legacy messages' CRC-32 on the legacy
// path are each among the proxy's largest per-byte costs; docs/BENCHMARKS.md).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pp::crc_vpclmul {

// Below this the set-up and the final reduction cost more than the
// 16-byte-lane or crc32-instruction loops they replace (micro_bench
// BM_Crc32cRead).
inline constexpr std::size_t kMinBytes = 256;
inline constexpr std::size_t kBlockBytes = 64;

// AVX-512F and VPCLMULQDQ, with the OS saving the AVX-512 state.
bool available();

#if defined(__x86_64__)

namespace detail {

// x^n mod P (P reflected), bit-reflected and shifted left by one: the
// multiplier that carries a 64-bit half of a lane over a folding distance.
// A lane's low half holds the higher powers, so it takes x^(bits + 32), the
// high half x^(bits - 32).
consteval long long x_power(std::uint32_t poly, unsigned n) {
  std::uint32_t r = 0x80000000u;  // x^0
  for (unsigned i = 0; i < n; ++i) r = (r & 1) ? (r >> 1) ^ poly : r >> 1;
  const std::uint64_t shifted = std::uint64_t{r} << 1;
  return static_cast<long long>(shifted);
}

struct FoldConstant {
  long long low, high;
};

consteval FoldConstant fold_by_bits(std::uint32_t poly, unsigned bits) {
  return {x_power(poly, bits + 32), x_power(poly, bits - 32)};
}

#define PP_VPCLMUL_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul")))

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

}  // namespace detail

// p[0, n) with the raw (non-inverted) register `raw_crc` joined to its first
// 32 bits, folded to one 128-bit lane congruent to the message mod P, as if
// it were the message's last 16 bytes: the caller reduces it (or folds more
// lanes into it). n >= kMinBytes and a multiple of kBlockBytes; only call it
// when available() is true.
template <std::uint32_t kPoly>
PP_VPCLMUL_TARGET __m128i fold_to_lane(std::uint32_t raw_crc, const std::uint8_t* p, std::size_t n) {
  using namespace detail;
  constexpr FoldConstant kFour = fold_by_bits(kPoly, 4 * 512);
  constexpr FoldConstant kOne = fold_by_bits(kPoly, 512);
  constexpr FoldConstant kLane1 = fold_by_bits(kPoly, 128);
  constexpr FoldConstant kLanes2 = fold_by_bits(kPoly, 2 * 128);
  constexpr FoldConstant kLanes3 = fold_by_bits(kPoly, 3 * 128);

  __m512i x0 = _mm512_xor_si512(load64(p), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, raw_crc));
  __m512i x1 = load64(p + 64);
  __m512i x2 = load64(p + 128);
  __m512i x3 = load64(p + 192);
  p += 256;
  n -= 256;
  const __m512i k4 = broadcast(kFour);
  for (; n >= 256; p += 256, n -= 256) {
    x0 = fold(x0, k4, load64(p));
    x1 = fold(x1, k4, load64(p + 64));
    x2 = fold(x2, k4, load64(p + 128));
    x3 = fold(x3, k4, load64(p + 192));
  }
  const __m512i k1 = broadcast(kOne);
  x0 = fold(fold(fold(x0, k1, x1), k1, x2), k1, x3);
  for (; n >= 64; p += 64, n -= 64) x0 = fold(x0, k1, load64(p));

  // (GCC 12 warns of its own undefined vectors in the lane extracts; a store
  // says the same.)
  alignas(64) __m128i lanes[4];
  _mm512_store_si512(lanes, x0);
  __m128i last = fold_lane(lanes[2], kLane1, lanes[3]);
  last = fold_lane(lanes[1], kLanes2, last);
  return fold_lane(lanes[0], kLanes3, last);
}

#undef PP_VPCLMUL_TARGET

#endif

}  // namespace pp::crc_vpclmul
