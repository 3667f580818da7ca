// CRC-32C. The hardware path follows the well-known scheme of running three
// independent crc32 streams over adjacent blocks (the instruction has a latency
// of 3 cycles but a throughput of 1 per cycle) and merging them by "shifting"
// the earlier CRCs over the later blocks' length with a precomputed GF(2)
// operator: crc(A ++ B) = shift_|B|(crc(A)) ^ crc_from_zero(B).
#include "proxy/records/crc32c.h"

#include <array>
#include <atomic>
#include <cstring>

#include "proxy/records/crc_slicing.h"
#include "proxy/records/crc_vpclmul.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

namespace pp {
namespace {

// Reflected Castagnoli polynomial (0x1EDC6F41 bit-reversed).
constexpr std::uint32_t kPoly = 0x82F63B78u;

constexpr crc_slicing::Tables kSlice = crc_slicing::make_tables(kPoly);

// Works on the raw (non-inverted) register.
std::uint32_t portable_raw(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  return crc_slicing::update(kSlice, crc, p, n);
}

#if defined(__x86_64__)

// Block lengths of the interleaved loops. LONG amortises the merge; SHORT keeps
// mid-sized inputs (a 1 KiB record batch) on the three-stream path too.
constexpr std::size_t kLong = 8192;
constexpr std::size_t kShort = 256;

// The GF(2) operator "append n zero bytes to the register", as 32 column
// images, turned into four byte-indexed tables so applying it costs 4 loads.
using Matrix = std::array<std::uint32_t, 32>;
using ShiftTable = std::array<std::array<std::uint32_t, 256>, 4>;

constexpr std::uint32_t apply_matrix(const Matrix& m, std::uint32_t v) {
  std::uint32_t out = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) out ^= m[i];
  }
  return out;
}

constexpr Matrix compose(const Matrix& a, const Matrix& b) {  // a after b
  Matrix out{};
  for (int i = 0; i < 32; ++i) out[i] = apply_matrix(a, b[i]);
  return out;
}

consteval ShiftTable make_shift_table(std::size_t zero_bytes) {
  Matrix one_byte{};
  for (int i = 0; i < 32; ++i) {
    std::uint32_t c = 1u << i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    one_byte[i] = c;
  }
  Matrix result{};
  for (int i = 0; i < 32; ++i) result[i] = 1u << i;  // identity
  Matrix power = one_byte;
  for (std::size_t n = zero_bytes; n != 0; n >>= 1) {
    if (n & 1) result = compose(power, result);
    power = compose(power, power);
  }
  ShiftTable t{};
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = apply_matrix(result, b << (8 * k));
  }
  return t;
}

constexpr ShiftTable kShiftLong = make_shift_table(kLong);
constexpr ShiftTable kShiftShort = make_shift_table(kShort);

inline std::uint32_t shift(const ShiftTable& t, std::uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

__attribute__((target("sse4.2"))) inline std::uint64_t load_u64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <std::size_t kBlock>
__attribute__((target("sse4.2"))) inline std::uint32_t three_way(std::uint32_t crc, const std::uint8_t*& p,
                                                                 std::size_t& n, const ShiftTable& t) {
  while (n >= 3 * kBlock) {
    std::uint64_t c0 = crc, c1 = 0, c2 = 0;
    const std::uint8_t* end = p + kBlock;
    do {
      c0 = _mm_crc32_u64(c0, load_u64(p));
      c1 = _mm_crc32_u64(c1, load_u64(p + kBlock));
      c2 = _mm_crc32_u64(c2, load_u64(p + 2 * kBlock));
      p += 8;
    } while (p < end);
    crc = shift(t, static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c1);
    crc = shift(t, crc) ^ static_cast<std::uint32_t>(c2);
    p += 2 * kBlock;
    n -= 3 * kBlock;
  }
  return crc;
}

__attribute__((target("sse4.2"))) std::uint32_t hardware_raw(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  crc = three_way<kLong>(crc, p, n, kShiftLong);
  crc = three_way<kShort>(crc, p, n, kShiftShort);
  std::uint64_t c = crc;
  while (n >= 8) {
    c = _mm_crc32_u64(c, load_u64(p));
    p += 8;
    n -= 8;
  }
  crc = static_cast<std::uint32_t>(c);
  while (n-- > 0) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

// Whole 64-byte blocks folded with VPCLMULQDQ, the last 0-63 bytes (and
// inputs too short to fold) by the crc32 instruction. The folded lane needs
// no Barrett reduction: it is congruent to the message mod P, so the crc32
// instruction over it from a zero register gives the register.
__attribute__((target("sse4.2"))) std::uint32_t folded_raw(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  if (n >= crc_vpclmul::kMinBytes) {
    const std::size_t folded = n & ~(crc_vpclmul::kBlockBytes - 1);
    const __m128i lane = crc_vpclmul::fold_to_lane<kPoly>(crc, p, folded);
    const std::uint64_t low = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(lane)));
    crc = static_cast<std::uint32_t>(_mm_crc32_u64(low, static_cast<std::uint64_t>(_mm_extract_epi64(lane, 1))));
    p += folded;
    n -= folded;
  }
  return hardware_raw(crc, p, n);
}

bool detect_sse42() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#else

std::uint32_t hardware_raw(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  return portable_raw(crc, p, n);
}
std::uint32_t folded_raw(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  return portable_raw(crc, p, n);
}
bool detect_sse42() {
  return false;
}

#endif

// Polynomials mod P in the reflected representation: bit 31 is x^0.
constexpr std::uint32_t kXPower0 = 0x80000000u;

constexpr std::uint32_t multiply_mod_p(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & (kXPower0 >> i)) product ^= b;  // a has x^i: add b * x^i
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

#if defined(__x86_64__)
// The same product with one carry-less multiplication (the bit loop above takes
// a step per bit of a product, and a join takes several products). Shifted left
// by one, the 64-bit product has x^0 at bit 63: its high word is already a
// 32-bit remainder, and its low word stands for itself times x^32, which is
// exactly what the crc32 instruction reduces from a zero register.
__attribute__((target("pclmul,sse4.2"))) std::uint32_t multiply_mod_p_hardware(std::uint32_t a, std::uint32_t b) {
  const __m128i product =
      _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(a)), _mm_cvtsi32_si128(static_cast<int>(b)), 0x00);
  const std::uint64_t shifted = static_cast<std::uint64_t>(_mm_cvtsi128_si64(product)) << 1;
  return _mm_crc32_u32(0, static_cast<std::uint32_t>(shifted)) ^ static_cast<std::uint32_t>(shifted >> 32);
}

bool detect_pclmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul");
}
#endif

using MultiplyFn = std::uint32_t (*)(std::uint32_t, std::uint32_t);

// x^(2^k) mod P for k = 0..71: enough for x^(8n) with any 64-bit n.
using PowerTable = std::array<std::uint32_t, 72>;
consteval PowerTable make_power_table() {
  PowerTable t{};
  t[0] = kXPower0 >> 1;  // x^1
  for (std::size_t k = 1; k < t.size(); ++k) t[k] = multiply_mod_p(t[k - 1], t[k - 1]);
  return t;
}
constexpr PowerTable kXPowerOfTwo = make_power_table();

// x^(8n) mod P: appending n zero bytes to a message multiplies its CRC by it.
std::uint32_t x_power_of_bytes(std::size_t n, MultiplyFn multiply) {
  std::uint32_t power = kXPower0;
  for (std::size_t k = 3; n != 0; n >>= 1, ++k) {
    if (n & 1) power = multiply(kXPowerOfTwo[k], power);
  }
  return power;
}

std::uint32_t combine_with(MultiplyFn multiply, std::uint32_t crc_a, std::uint32_t crc_b, std::size_t b_size) {
  // The pre- and post-inversions of crc_a and crc_b cancel: what is left is
  // crc_a carried over b_size zero bytes, plus crc_b.
  return multiply(x_power_of_bytes(b_size, multiply), crc_a) ^ crc_b;
}

using RawFn = std::uint32_t (*)(std::uint32_t, const std::uint8_t*, std::size_t);

std::uint32_t resolve_and_run(std::uint32_t crc, const std::uint8_t* p, std::size_t n);

// Constant-initialised, so crc32c() is safe from any static initialiser; the
// first call replaces the resolver with the chosen implementation.
std::atomic<RawFn> g_impl{&resolve_and_run};

bool hardware_available() {
  static const bool available = detect_sse42();
  return available;
}

bool folding_available() {
  return hardware_available() && crc_vpclmul::available();
}

std::uint32_t resolve_and_run(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  const RawFn chosen = folding_available() ? &folded_raw : hardware_available() ? &hardware_raw : &portable_raw;
  g_impl.store(chosen, std::memory_order_relaxed);
  return chosen(crc, p, n);
}

}  // namespace

std::uint32_t crc32c(ByteView data, std::uint32_t crc) {
  return ~g_impl.load(std::memory_order_relaxed)(~crc, data.data(), data.size());
}

std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::size_t b_size) {
#if defined(__x86_64__)
  static const MultiplyFn multiply =
      hardware_available() && detect_pclmul() ? &multiply_mod_p_hardware : &multiply_mod_p;
#else
  static const MultiplyFn multiply = &multiply_mod_p;
#endif
  return combine_with(multiply, crc_a, crc_b, b_size);
}

std::uint32_t crc32c_combine_portable(std::uint32_t crc_a, std::uint32_t crc_b, std::size_t b_size) {
  return combine_with(&multiply_mod_p, crc_a, crc_b, b_size);
}

std::uint32_t crc32c_portable(ByteView data, std::uint32_t crc) {
  return ~portable_raw(~crc, data.data(), data.size());
}

bool crc32c_hardware_available() {
  return hardware_available();
}

std::uint32_t crc32c_hardware(ByteView data, std::uint32_t crc) {
  return ~hardware_raw(~crc, data.data(), data.size());
}

bool crc32c_folding_available() {
  return folding_available();
}

std::uint32_t crc32c_folding(ByteView data, std::uint32_t crc) {
  return ~folded_raw(~crc, data.data(), data.size());
}

std::string_view crc32c_implementation() {
  return folding_available() ? "avx512-vpclmulqdq" : hardware_available() ? "sse4.2" : "portable";
}

}  // namespace pp
