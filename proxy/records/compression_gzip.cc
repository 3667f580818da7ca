// gzip through zlib. Kafka writes a gzip member (GZIPOutputStream); Java's
// GZIPInputStream reads concatenated members, so we do too.
#include <zlib.h>

#include <climits>

#include "proxy/records/compression_codecs.h"

namespace pp::detail {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper
constexpr int kAutoWindowBits = 15 + 32;  // accept a gzip or zlib header

class Inflater {
 public:
  Inflater() { ok_ = inflateInit2(&stream_, kAutoWindowBits) == Z_OK; }
  ~Inflater() {
    if (ok_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool ok() const { return ok_; }
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

}  // namespace

void gzip_compress(ByteView input, Bytes& out, const CompressOptions& options) {
  z_stream s{};
  const int level = options.level.value_or(Z_DEFAULT_COMPRESSION);
  if (deflateInit2(&s, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    compression_internal_failure("deflateInit2");
  }
  const std::size_t start = out.size();
  out.resize(start + deflateBound(&s, input.size()) + 32);
  s.next_in = const_cast<Bytef*>(input.data());
  s.next_out = out.data() + start;
  std::size_t in_left = input.size();
  int rc = Z_OK;
  // zlib's counters are uInt: feed inputs over 4 GiB in slices.
  while (rc != Z_STREAM_END) {
    const uInt in_chunk = static_cast<uInt>(std::min<std::size_t>(in_left, UINT_MAX));
    s.avail_in = in_chunk;
    const std::size_t out_left = out.size() - static_cast<std::size_t>(s.next_out - out.data());
    s.avail_out = static_cast<uInt>(std::min<std::size_t>(out_left, UINT_MAX));
    rc = deflate(&s, in_chunk == in_left ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) compression_internal_failure("deflate");
    in_left -= in_chunk - s.avail_in;
    if (rc == Z_BUF_ERROR && s.avail_out == 0) compression_internal_failure("deflateBound too small");
  }
  out.resize(static_cast<std::size_t>(s.next_out - out.data()));
  deflateEnd(&s);
}

Decoded<Bytes> gzip_decompress(ByteView input, std::size_t cap) {
  Inflater inflater;
  if (!inflater.ok()) compression_internal_failure("inflateInit2");
  z_stream& s = inflater.stream();
  CappedOutput out(cap, output_hint(input.size()));
  std::size_t consumed = 0;
  bool member_done = false;
  while (true) {
    if (member_done) {
      // Another member may follow (Java's GZIPInputStream reads them all).
      if (consumed == input.size()) break;
      if (inflateReset(&s) != Z_OK) compression_internal_failure("inflateReset");
      member_done = false;
    }
    std::size_t available = 0;
    std::uint8_t* dst = out.space(available);
    if (available == 0) return codec_error(DecodeErrorKind::kTooLarge, consumed, "gzip");
    const std::size_t in_chunk = std::min<std::size_t>(input.size() - consumed, UINT_MAX);
    s.next_in = const_cast<Bytef*>(input.data() + consumed);
    s.avail_in = static_cast<uInt>(in_chunk);
    s.next_out = dst;
    s.avail_out = static_cast<uInt>(std::min<std::size_t>(available, UINT_MAX));
    const uInt out_before = s.avail_out;
    const int rc = inflate(&s, Z_NO_FLUSH);
    consumed += in_chunk - s.avail_in;
    out.commit(out_before - s.avail_out);
    if (out.over_cap()) return codec_error(DecodeErrorKind::kTooLarge, consumed, "gzip");
    if (rc == Z_STREAM_END) {
      member_done = true;
      continue;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
      return codec_error(DecodeErrorKind::kInvalidValue, consumed, "gzip");
    }
    if (rc == Z_MEM_ERROR) compression_internal_failure("inflate out of memory");
    // Z_OK or Z_BUF_ERROR: no progress possible without more input means the
    // stream ended early.
    if (consumed == input.size() && s.avail_out != 0) {
      return codec_error(DecodeErrorKind::kTruncated, consumed, "gzip");
    }
  }
  return std::move(out).take();
}

}  // namespace pp::detail
