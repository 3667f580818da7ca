// CRC-32C folded 256 bytes at a time with AVX-512 VPCLMULQDQ: internal to
// proxy/records/crc32c.cc, which picks it at run time when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pp::crc32c_vpclmul {

// Below this the set-up and the reduction to 32 bits cost more than the
// three crc32 streams they replace (micro_bench BM_Crc32cRead).
inline constexpr std::size_t kMinBytes = 256;
inline constexpr std::size_t kBlockBytes = 64;

// AVX-512F, VPCLMULQDQ and SSE4.2, with the OS saving the AVX-512 state.
bool available();

// The raw (non-inverted) register carried over p[0, n): n >= kMinBytes and a
// multiple of kBlockBytes. Only call it when available() is true.
std::uint32_t fold_raw(std::uint32_t raw_crc, const std::uint8_t* p, std::size_t n);

}  // namespace pp::crc32c_vpclmul
