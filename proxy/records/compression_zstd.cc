// zstd through libzstd's streaming API (Kafka >= 2.1, KIP-110). Streaming
// lets us stop at the output cap whatever the frame header claims.
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <bit>
#include <memory>

#include "proxy/records/compression_codecs.h"

namespace pp::detail {
namespace {

constexpr int kKafkaDefaultLevel = 3;  // ZSTD_CLEVEL_DEFAULT, Kafka's default too

// The decoder allocates a window of up to 2^windowLog bytes before producing
// anything, so the window, too, is bounded: by the output cap, but never below
// 8 MiB so frames from streaming compressors (which keep their level's window)
// still decode, and never above libzstd's own default limit.
int window_log_max(std::size_t cap) {
  const int wanted = cap >= (std::size_t{1} << 27) ? 27 : static_cast<int>(std::bit_width(cap));
  return std::max(23, std::min(27, wanted));
}

struct DctxDeleter {
  void operator()(ZSTD_DCtx* ctx) const { ZSTD_freeDCtx(ctx); }
};
struct CctxDeleter {
  void operator()(ZSTD_CCtx* ctx) const { ZSTD_freeCCtx(ctx); }
};

// One context per thread: creating one costs more than decompressing a small batch.
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DctxDeleter> ctx(ZSTD_createDCtx());
  if (!ctx) compression_internal_failure("ZSTD_createDCtx");
  return ctx.get();
}
ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> ctx(ZSTD_createCCtx());
  if (!ctx) compression_internal_failure("ZSTD_createCCtx");
  return ctx.get();
}

DecodeErrorKind kind_of(std::size_t zstd_result) {
  switch (ZSTD_getErrorCode(zstd_result)) {
    case ZSTD_error_checksum_wrong:
      return DecodeErrorKind::kBadChecksum;
    case ZSTD_error_frameParameter_windowTooLarge:
      return DecodeErrorKind::kTooLarge;
    case ZSTD_error_frameParameter_unsupported:
    case ZSTD_error_version_unsupported:
    case ZSTD_error_dictionary_wrong:
      return DecodeErrorKind::kUnsupported;
    case ZSTD_error_memory_allocation:
      compression_internal_failure("zstd allocation");
    default:
      return DecodeErrorKind::kInvalidValue;
  }
}

}  // namespace

void zstd_compress(ByteView input, Bytes& out, const CompressOptions& options) {
  ZSTD_CCtx* cctx = thread_cctx();
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, options.level.value_or(kKafkaDefaultLevel));
  const std::size_t start = out.size();
  out.resize(start + ZSTD_compressBound(input.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data() + start, out.size() - start, input.data(), input.size());
  if (ZSTD_isError(n)) compression_internal_failure("ZSTD_compress2");
  out.resize(start + n);
}

Decoded<Bytes> zstd_decompress(ByteView input, std::size_t cap) {
  ZSTD_DCtx* dctx = thread_dctx();
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log_max(cap));
  CappedOutput out(cap, output_hint(input.size()));
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  std::size_t last = 1;  // ZSTD_decompressStream's result: 0 = a frame just ended
  while (true) {
    std::size_t available = 0;
    std::uint8_t* dst = out.space(available);
    if (available == 0) return codec_error(DecodeErrorKind::kTooLarge, in.pos, "zstd");
    ZSTD_outBuffer o{dst, available, 0};
    const std::size_t in_before = in.pos;
    last = ZSTD_decompressStream(dctx, &o, &in);
    if (ZSTD_isError(last)) return codec_error(kind_of(last), in.pos, "zstd");
    out.commit(o.pos);
    if (out.over_cap()) return codec_error(DecodeErrorKind::kTooLarge, in.pos, "zstd");
    if (in.pos == in.size) {
      if (last == 0) break;  // every frame complete (zstd reads concatenated frames)
      if (o.pos == 0 && in.pos == in_before) {
        return codec_error(DecodeErrorKind::kTruncated, in.pos, "zstd");
      }
    }
  }
  return std::move(out).take();
}

}  // namespace pp::detail
