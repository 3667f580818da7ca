// LZ4 frames through liblz4 (lz4frame.h). Kafka writes LZ4 frames (never the
// raw block format): 64 KiB independent blocks, no content checksum
// (KafkaLZ4BlockOutputStream). For magic-0 messages see Lz4Framing.
#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>

#include <array>
#include <bit>
#include <cstring>

#include "proxy/records/compression_codecs.h"
#include "proxy/records/lz4_frame_header.h"

namespace pp::detail {
namespace {

constexpr std::uint32_t kPrime1 = 0x9E3779B1u;
constexpr std::uint32_t kPrime2 = 0x85EBCA77u;
constexpr std::uint32_t kPrime3 = 0xC2B2AE3Du;
constexpr std::uint32_t kPrime4 = 0x27D4EB2Fu;
constexpr std::uint32_t kPrime5 = 0x165667B1u;

std::uint32_t read_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint32_t round32(std::uint32_t acc, std::uint32_t input) {
  return std::rotl(acc + input * kPrime2, 13) * kPrime1;
}

class Lz4Dctx {
 public:
  Lz4Dctx() {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION))) {
      compression_internal_failure("LZ4F_createDecompressionContext");
    }
  }
  ~Lz4Dctx() { LZ4F_freeDecompressionContext(ctx_); }
  Lz4Dctx(const Lz4Dctx&) = delete;
  Lz4Dctx& operator=(const Lz4Dctx&) = delete;
  LZ4F_dctx* get() { return ctx_; }

 private:
  LZ4F_dctx* ctx_ = nullptr;
};

DecodeErrorKind kind_of(std::size_t lz4_result) {
  switch (LZ4F_getErrorCode(lz4_result)) {
    case LZ4F_ERROR_headerChecksum_invalid:
    case LZ4F_ERROR_blockChecksum_invalid:
    case LZ4F_ERROR_contentChecksum_invalid:
      return DecodeErrorKind::kBadChecksum;
    case LZ4F_ERROR_maxBlockSize_invalid:
    case LZ4F_ERROR_headerVersion_wrong:
    case LZ4F_ERROR_frameType_unknown:
      return DecodeErrorKind::kUnsupported;
    case LZ4F_ERROR_allocation_failed:
      compression_internal_failure("lz4 allocation");
    default:
      return DecodeErrorKind::kInvalidValue;
  }
}

}  // namespace

std::uint32_t xxh32(ByteView data, std::uint32_t seed) {
  const std::uint8_t* p = data.data();
  const std::uint8_t* end = p + data.size();
  std::uint32_t h;
  if (data.size() >= 16) {
    std::uint32_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    for (; end - p >= 16; p += 16) {
      v1 = round32(v1, read_le32(p));
      v2 = round32(v2, read_le32(p + 4));
      v3 = round32(v3, read_le32(p + 8));
      v4 = round32(v4, read_le32(p + 12));
    }
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
  } else {
    h = seed + kPrime5;
  }
  h += static_cast<std::uint32_t>(data.size());
  for (; end - p >= 4; p += 4) h = std::rotl(h + read_le32(p) * kPrime3, 17) * kPrime4;
  for (; p < end; ++p) h = std::rotl(h + *p * kPrime5, 11) * kPrime1;
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

std::optional<std::size_t> lz4_header_length(ByteView frame) {
  if (frame.size() < 7 || read_le32(frame.data()) != kLz4FrameMagic) return std::nullopt;
  const std::uint8_t flg = frame[4];
  std::size_t length = 4 + 2 + 1;  // magic, FLG, BD, HC
  if (flg & 0x08) length += 8;     // content size
  if (flg & 0x01) length += 4;     // dictionary id
  if (frame.size() < length) return std::nullopt;
  return length;
}

std::uint8_t lz4_header_checksum(ByteView frame, std::size_t header_length) {
  return static_cast<std::uint8_t>(xxh32(frame.subspan(4, header_length - 5)) >> 8);
}

std::uint8_t lz4_legacy_header_checksum(ByteView frame, std::size_t header_length) {
  return static_cast<std::uint8_t>(xxh32(frame.first(header_length - 1)) >> 8);
}

void lz4_compress(ByteView input, Bytes& out, const CompressOptions& options) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.compressionLevel = options.level.value_or(0);  // 0: fast mode, Kafka's default
  const std::size_t start = out.size();
  out.resize(start + LZ4F_compressFrameBound(input.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data() + start, out.size() - start, input.data(), input.size(), &prefs);
  if (LZ4F_isError(n)) compression_internal_failure("LZ4F_compressFrame");
  out.resize(start + n);
  if (options.lz4_framing == Lz4Framing::kKafkaLegacy) {
    const ByteView frame(out.data() + start, n);
    const std::size_t header = lz4_header_length(frame).value_or(0);
    if (header == 0) compression_internal_failure("lz4 frame header");
    out[start + header - 1] = lz4_legacy_header_checksum(frame, header);
  }
}

Decoded<Bytes> lz4_decompress(ByteView input, std::size_t cap, Lz4Framing framing) {
  // For kKafkaLegacy the header goes to liblz4 from a patched copy carrying the
  // correct HC, whatever the sender put there; the rest is read in place.
  std::array<std::uint8_t, 19> header{};
  std::array<ByteView, 2> pieces = {input, ByteView{}};
  if (framing == Lz4Framing::kKafkaLegacy) {
    if (auto length = lz4_header_length(input)) {
      std::memcpy(header.data(), input.data(), *length);
      header[*length - 1] = lz4_header_checksum(input, *length);
      pieces = {ByteView(header.data(), *length), input.subspan(*length)};
    }
  }
  Lz4Dctx dctx;
  CappedOutput out(cap, output_hint(input.size()));
  std::size_t piece = 0;
  std::size_t consumed = 0;  // offset in `input`; the patched header maps 1:1
  while (true) {
    ByteView& src = pieces[piece];
    std::size_t available = 0;
    std::uint8_t* dst = out.space(available);
    if (available == 0) return codec_error(DecodeErrorKind::kTooLarge, consumed, "lz4");
    std::size_t dst_size = available;
    std::size_t src_size = src.size();
    const std::size_t hint = LZ4F_decompress(dctx.get(), dst, &dst_size, src.data(), &src_size, nullptr);
    if (LZ4F_isError(hint)) return codec_error(kind_of(hint), consumed, "lz4");
    src = src.subspan(src_size);
    consumed += src_size;
    out.commit(dst_size);
    if (out.over_cap()) return codec_error(DecodeErrorKind::kTooLarge, consumed, "lz4");
    if (hint == 0) {  // end of the frame
      if (consumed != input.size()) {
        return codec_error(DecodeErrorKind::kTrailingBytes, consumed, "lz4");
      }
      break;
    }
    if (src.empty()) {
      if (piece + 1 < pieces.size() && !pieces[piece + 1].empty()) {
        ++piece;
      } else if (src_size == 0 && dst_size == 0) {
        return codec_error(DecodeErrorKind::kTruncated, consumed, "lz4");
      }
    }
  }
  return std::move(out).take();
}

}  // namespace pp::detail
