// snappy. Kafka's Java client writes xerial's SnappyOutputStream framing: a
// 16-byte header (0x82 "SNAPPY" 0, int32 version, int32 compatible version),
// then blocks of [int32 BE compressed length][raw snappy]. xerial's
// SnappyInputStream falls back to one raw block when the header is absent,
// and librdkafka and others send raw snappy, so we read both.
#include <snappy.h>

#include <array>
#include <cstring>

#include "proxy/records/compression_codecs.h"

namespace pp::detail {
namespace {

constexpr std::array<std::uint8_t, 8> kXerialMagic = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr std::size_t kXerialHeaderSize = 16;
constexpr std::int32_t kXerialVersion = 1;
constexpr std::int32_t kXerialCompatibleVersion = 1;
// SnappyOutputStream's default block size (32 KiB of uncompressed input).
constexpr std::size_t kXerialBlockSize = 32 * 1024;

bool has_xerial_header(ByteView input) {
  return input.size() >= kXerialHeaderSize && std::memcmp(input.data(), kXerialMagic.data(), kXerialMagic.size()) == 0;
}

void put_be32(Bytes& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 24));
  out.push_back(static_cast<std::uint8_t>(v >> 16));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

// Decodes one raw snappy block into `out`, checking its declared length against
// the cap before allocating anything.
Decoded<void> raw_block(ByteView block, std::size_t at, CappedOutput& out) {
  std::size_t length = 0;
  if (!snappy::GetUncompressedLength(reinterpret_cast<const char*>(block.data()), block.size(), &length)) {
    return codec_error(DecodeErrorKind::kInvalidValue, at, "snappy");
  }
  // A snappy copy tag of 2-5 bytes expands to at most 64 bytes, so a block
  // that claims more than 32x its size is corrupt; refuse before allocating.
  if (length / 32 > block.size()) return codec_error(DecodeErrorKind::kInvalidValue, at, "snappy");
  std::uint8_t* dst = out.reserve_exact(length);
  if (dst == nullptr) return codec_error(DecodeErrorKind::kTooLarge, at, "snappy");
  if (!snappy::RawUncompress(reinterpret_cast<const char*>(block.data()), block.size(), reinterpret_cast<char*>(dst))) {
    return codec_error(DecodeErrorKind::kInvalidValue, at, "snappy");
  }
  out.commit(length);
  return {};
}

}  // namespace

void snappy_compress(ByteView input, Bytes& out) {
  out.insert(out.end(), kXerialMagic.begin(), kXerialMagic.end());
  put_be32(out, kXerialVersion);
  put_be32(out, kXerialCompatibleVersion);
  for (std::size_t pos = 0; pos < input.size(); pos += kXerialBlockSize) {
    const std::size_t n = std::min(kXerialBlockSize, input.size() - pos);
    const std::size_t len_at = out.size();
    out.resize(len_at + 4 + snappy::MaxCompressedLength(n));
    std::size_t written = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(input.data() + pos), n,
                        reinterpret_cast<char*>(out.data() + len_at + 4), &written);
    out.resize(len_at + 4 + written);
    const auto len = static_cast<std::uint32_t>(written);
    out[len_at] = static_cast<std::uint8_t>(len >> 24);
    out[len_at + 1] = static_cast<std::uint8_t>(len >> 16);
    out[len_at + 2] = static_cast<std::uint8_t>(len >> 8);
    out[len_at + 3] = static_cast<std::uint8_t>(len);
  }
}

Decoded<Bytes> snappy_decompress(ByteView input, std::size_t cap) {
  if (!has_xerial_header(input)) {
    std::size_t length = 0;
    if (!snappy::GetUncompressedLength(reinterpret_cast<const char*>(input.data()), input.size(), &length)) {
      return codec_error(DecodeErrorKind::kInvalidValue, 0, "snappy");
    }
    if (length > cap) return codec_error(DecodeErrorKind::kTooLarge, 0, "snappy");
    CappedOutput out(cap, std::min(length, input.size() * 32));
    if (auto ok = raw_block(input, 0, out); !ok) return std::unexpected(ok.error());
    return std::move(out).take();
  }
  CappedOutput out(cap, output_hint(input.size()));
  WireReader reader(input);
  if (auto skipped = reader.skip(kXerialHeaderSize); !skipped) return std::unexpected(skipped.error());
  while (!reader.empty()) {
    const std::size_t at = reader.offset();
    auto length = reader.read_int32();
    if (!length) return codec_error(DecodeErrorKind::kTruncated, at, "snappy.block_length");
    if (*length < 0) return codec_error(DecodeErrorKind::kNegativeLength, at, "snappy.block_length");
    auto block = reader.read_span(static_cast<std::size_t>(*length));
    if (!block) return codec_error(DecodeErrorKind::kLengthTooLarge, at, "snappy.block_length");
    if (auto ok = raw_block(*block, at + 4, out); !ok) return std::unexpected(ok.error());
  }
  return std::move(out).take();
}

}  // namespace pp::detail
