// CRC-32C (Castagnoli), the checksum of RecordBatch v2 (KIP-98; Kafka's
// Crc32C, DefaultRecordBatch.computeChecksum). Every batch we build or read is
// checksummed once, so this sits on the hot path of the whole proxy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/base/bytes.h"

namespace pp {

// CRC-32C of `data`, continuing from a previous result `crc` (0 to start), so
// crc32c(b, crc32c(a)) == crc32c(a ++ b). Folds with AVX-512 VPCLMULQDQ or
// uses the SSE4.2 crc32 instruction when the CPU has them (chosen once, on
// first use), the portable tables otherwise.
std::uint32_t crc32c(ByteView data, std::uint32_t crc = 0);

// CRC-32C of a ++ b from crc32c(a), crc32c(b) and b's length, without reading
// either again: O(log |b|) multiplications in GF(2)[x] mod P (as zlib's
// crc32_combine for its polynomial). XOR-ing out works the same way, so
// crc32c_combine(crc32c(a), crc32c(a ++ b), |b|) == crc32c(b): a client
// batch's checked CRC gives its records section's own CRC, which the batch
// forwarding them upstream reuses instead of a second pass.
std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::size_t b_size);
// The same with the portable multiplication (crc32c_combine multiplies with
// PCLMULQDQ and the crc32 instruction when the CPU has both), for tests.
std::uint32_t crc32c_combine_portable(std::uint32_t crc_a, std::uint32_t crc_b, std::size_t b_size);

// The portable slicing-by-8 implementation, always available. Exposed so tests
// and benchmarks can compare it with the hardware path.
std::uint32_t crc32c_portable(ByteView data, std::uint32_t crc = 0);

// The SSE4.2 implementation (three interleaved streams). Only call it when
// crc32c_hardware_available() is true.
bool crc32c_hardware_available();
std::uint32_t crc32c_hardware(ByteView data, std::uint32_t crc = 0);

// Whole 64-byte blocks folded by AVX-512 VPCLMULQDQ (from 256 bytes), the
// rest by the SSE4.2 path: what crc32c() uses when the CPU has both. Only call
// it when crc32c_folding_available() is true.
bool crc32c_folding_available();
std::uint32_t crc32c_folding(ByteView data, std::uint32_t crc = 0);

// "avx512-vpclmulqdq", "sse4.2" or "portable": which one crc32c() uses, for
// the start-up log.
std::string_view crc32c_implementation();

}  // namespace pp
