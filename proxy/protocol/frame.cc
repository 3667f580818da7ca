#include "proxy/protocol/frame.h"

#include <algorithm>

#include "proxy/protocol/wire_writer.h"

namespace pp {

namespace {
constexpr std::size_t kInitialFrameReserve = 64 * 1024;
}  // namespace

Decoded<void> FrameReader::append(ByteView data) {
  if (failed_) return std::unexpected(DecodeError{DecodeErrorKind::kInvalidValue, stream_offset_, "frame"});
  while (!data.empty()) {
    if (!partial_) {
      const std::size_t take = std::min(data.size(), size_prefix_.size() - prefix_have_);
      std::copy_n(data.begin(), take, size_prefix_.begin() + static_cast<std::ptrdiff_t>(prefix_have_));
      prefix_have_ += take;
      data = data.subspan(take);
      stream_offset_ += take;
      if (prefix_have_ < size_prefix_.size()) break;
      prefix_have_ = 0;
      WireReader r(size_prefix_, stream_offset_ - 4);
      const std::int32_t size = *r.read_int32();
      if (size < 0) {
        failed_ = true;
        return std::unexpected(DecodeError{DecodeErrorKind::kNegativeLength, stream_offset_ - 4, "frame_size"});
      }
      if (static_cast<std::size_t>(size) > max_frame_bytes_) {
        failed_ = true;
        return std::unexpected(DecodeError{DecodeErrorKind::kTooLarge, stream_offset_ - 4, "frame_size"});
      }
      partial_.emplace();
      ++frames_started_;
      // Grow with the bytes that arrive: a peer announcing a large frame and
      // trickling it must not make us hold the whole size up front.
      partial_->reserve(std::min<std::size_t>(static_cast<std::size_t>(size), kInitialFrameReserve));
      partial_need_ = static_cast<std::size_t>(size);
    }
    const std::size_t take = std::min(data.size(), partial_need_ - partial_->size());
    // Past the first 64 KiB, straight to the announced size: doubling would
    // leave up to twice the frame allocated, and the memory budget has
    // reserved the announced size from the prefix on anyway.
    if (partial_->size() + take > partial_->capacity()) partial_->reserve(partial_need_);
    partial_->insert(partial_->end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
    data = data.subspan(take);
    stream_offset_ += take;
    buffered_ += take;
    if (partial_->size() == partial_need_) {
      ready_.push_back(std::move(*partial_));
      partial_.reset();
    }
  }
  return {};
}

std::optional<Bytes> FrameReader::pop() {
  if (ready_.empty()) return std::nullopt;
  Bytes out = std::move(ready_.front());
  ready_.pop_front();
  buffered_ -= out.size();
  return out;
}

Bytes frame(Bytes header_and_body) {
  Bytes out;
  out.reserve(header_and_body.size() + 4);
  WireWriter w(out);
  w.int32(static_cast<std::int32_t>(header_and_body.size()));
  w.raw(ByteView(header_and_body));
  return out;
}

}  // namespace pp
