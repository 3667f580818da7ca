// Every codec over arbitrary bytes under a 1 MiB cap: never crash, never
// return more than the cap, and what decompresses must survive a round trip.
// The first byte picks the codec (bits 0-2) and the LZ4 framing (bit 3).
#include <cstdint>

#include "proxy/records/compression.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  constexpr std::size_t kCap = 1 << 20;
  const auto codec = static_cast<pp::CompressionCodec>((data[0] & 0x07) % 5);
  const pp::Lz4Framing framing = (data[0] & 0x08) ? pp::Lz4Framing::kKafkaLegacy : pp::Lz4Framing::kStandard;
  const pp::ByteView input(data + 1, size - 1);
  auto out = pp::decompress(codec, input, kCap, framing);
  if (!out) {
    if (out.error().field.empty()) __builtin_trap();
    if (out.error().offset > input.size()) __builtin_trap();
    return 0;
  }
  if (out->size() > kCap) __builtin_trap();
  const pp::Bytes packed = pp::compress(codec, *out, pp::CompressOptions{std::nullopt, framing});
  auto again = pp::decompress(codec, packed, kCap, framing);
  if (!again || *again != *out) __builtin_trap();
  return 0;
}
