// Internal: one pair of functions per codec (compression_<codec>.cc) and the
// capped output buffer they share. Not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "proxy/records/compression.h"

namespace pp::detail {

// Output that grows geometrically but never beyond cap + 1 bytes: producing
// that last byte proves the data is over the cap without holding more.
class CappedOutput {
 public:
  CappedOutput(std::size_t cap, std::size_t size_hint) : cap_(cap), limit_(cap == SIZE_MAX ? cap : cap + 1) {
    buffer_.resize(std::min(limit_, std::max<std::size_t>(size_hint, 4096)));
  }

  // Free space after the written bytes; grows first when full. Empty when the
  // limit is reached.
  std::uint8_t* space(std::size_t& available) {
    if (written_ == buffer_.size() && buffer_.size() < limit_) {
      const std::size_t grown = buffer_.size() <= limit_ / 2 ? buffer_.size() * 2 : limit_;
      buffer_.resize(grown);
    }
    available = buffer_.size() - written_;
    return buffer_.data() + written_;
  }
  void commit(std::size_t n) { written_ += n; }
  // Room for exactly n more bytes, or nullptr when that would pass the cap
  // (a block whose decoded size is known up front).
  std::uint8_t* reserve_exact(std::size_t n) {
    if (n > cap_ - written_) return nullptr;
    if (buffer_.size() - written_ < n) buffer_.resize(std::max(written_ + n, std::min(limit_, buffer_.size() * 2)));
    return buffer_.data() + written_;
  }
  std::size_t written() const { return written_; }
  bool over_cap() const { return limit_ != SIZE_MAX && written_ == limit_; }
  Bytes take() && {
    buffer_.resize(written_);
    return std::move(buffer_);
  }

 private:
  Bytes buffer_;
  std::size_t written_ = 0;
  std::size_t cap_;
  std::size_t limit_;
};

inline std::unexpected<DecodeError> codec_error(DecodeErrorKind kind, std::size_t offset, std::string_view codec) {
  return std::unexpected(DecodeError{kind, offset, std::string(codec)});
}

// First-guess output size: compressed record data usually inflates 2-10x.
inline std::size_t output_hint(std::size_t input_size) {
  return input_size * 4;
}

void gzip_compress(ByteView input, Bytes& out, const CompressOptions& options);
Decoded<Bytes> gzip_decompress(ByteView input, std::size_t cap);
void snappy_compress(ByteView input, Bytes& out);
Decoded<Bytes> snappy_decompress(ByteView input, std::size_t cap);
void lz4_compress(ByteView input, Bytes& out, const CompressOptions& options);
Decoded<Bytes> lz4_decompress(ByteView input, std::size_t cap, Lz4Framing framing);
void zstd_compress(ByteView input, Bytes& out, const CompressOptions& options);
Decoded<Bytes> zstd_decompress(ByteView input, std::size_t cap);

// Our own bug (a library refusing a correctly sized call): not peer-caused.
[[noreturn]] void compression_internal_failure(const char* what);

}  // namespace pp::detail
