#include "proxy/records/compression.h"

#include <cstdio>
#include <cstdlib>

#include "proxy/records/compression_codecs.h"

namespace pp {

std::string_view to_string(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kNone:
      return "none";
    case CompressionCodec::kGzip:
      return "gzip";
    case CompressionCodec::kSnappy:
      return "snappy";
    case CompressionCodec::kLz4:
      return "lz4";
    case CompressionCodec::kZstd:
      return "zstd";
  }
  return "unknown";
}

std::optional<CompressionCodec> parse_compression_codec(std::string_view name) {
  for (int id = 0; id <= 4; ++id) {
    const auto codec = static_cast<CompressionCodec>(id);
    if (to_string(codec) == name) return codec;
  }
  return std::nullopt;
}

std::optional<CompressionCodec> compression_codec_from_id(int id) {
  if (id < 0 || id > 4) return std::nullopt;
  return static_cast<CompressionCodec>(id);
}

void compress_append(CompressionCodec codec, ByteView input, Bytes& out, const CompressOptions& options) {
  switch (codec) {
    case CompressionCodec::kNone:
      out.insert(out.end(), input.begin(), input.end());
      return;
    case CompressionCodec::kGzip:
      detail::gzip_compress(input, out, options);
      return;
    case CompressionCodec::kSnappy:
      detail::snappy_compress(input, out);
      return;
    case CompressionCodec::kLz4:
      detail::lz4_compress(input, out, options);
      return;
    case CompressionCodec::kZstd:
      detail::zstd_compress(input, out, options);
      return;
  }
  detail::compression_internal_failure("unknown codec");
}

Bytes compress(CompressionCodec codec, ByteView input, const CompressOptions& options) {
  Bytes out;
  compress_append(codec, input, out, options);
  return out;
}

Decoded<Bytes> decompress(CompressionCodec codec, ByteView input, std::size_t max_output_bytes,
                          Lz4Framing lz4_framing) {
  switch (codec) {
    case CompressionCodec::kNone:
      if (input.size() > max_output_bytes) {
        return detail::codec_error(DecodeErrorKind::kTooLarge, 0, "none");
      }
      return Bytes(input.begin(), input.end());
    case CompressionCodec::kGzip:
      return detail::gzip_decompress(input, max_output_bytes);
    case CompressionCodec::kSnappy:
      return detail::snappy_decompress(input, max_output_bytes);
    case CompressionCodec::kLz4:
      return detail::lz4_decompress(input, max_output_bytes, lz4_framing);
    case CompressionCodec::kZstd:
      return detail::zstd_decompress(input, max_output_bytes);
  }
  return detail::codec_error(DecodeErrorKind::kUnsupported, 0, "codec");
}

namespace detail {

void compression_internal_failure(const char* what) {
  std::fprintf(stderr, "produce-proxy: compression library failure: %s\n", what);
  std::abort();
}

}  // namespace detail
}  // namespace pp
