#include "proxy/protocol/frame.h"

#include <algorithm>

#include "proxy/protocol/wire_writer.h"

namespace pp {

Decoded<void> FrameReader::append(ByteView data) {
  if (failed_) return std::unexpected(DecodeError{DecodeErrorKind::kInvalidValue, stream_offset_, "frame"});
  while (!data.empty()) {
    if (!partial_) {
      auto prefix = read_prefix(data);
      if (!prefix) return prefix;
      if (!partial_) break;  // the prefix is still incomplete
    }
    const std::size_t take = std::min(data.size(), partial_need_ - partial_have_);
    // A tail handed out and not read into is overwritten first: the frame's
    // bytes are contiguous, whichever way they came.
    const std::size_t into_tail = std::min(take, partial_->size() - partial_have_);
    std::copy_n(data.begin(), into_tail, partial_->begin() + static_cast<std::ptrdiff_t>(partial_have_));
    reserve_for(partial_have_ + take);
    partial_->append(data.subspan(into_tail, take - into_tail));
    data = data.subspan(take);
    frame_bytes_added(take);
  }
  return {};
}

std::span<std::uint8_t> FrameReader::writable_tail() {
  if (failed_ || !partial_) return {};
  if (partial_->size() == partial_have_) {
    const std::size_t step = std::min(partial_need_ - partial_have_, kTailStepBytes);
    reserve_for(partial_have_ + step);
    // Not zeroed (FrameBuffer): pages are touched only as the socket writes
    // them, one step at a time, so a trickling peer makes us touch little
    // more than it sent.
    partial_->resize_uninitialized(partial_have_ + step);
  }
  return std::span<std::uint8_t>(*partial_).subspan(partial_have_);
}

void FrameReader::commit(std::size_t n) {
  if (!partial_) return;
  frame_bytes_added(std::min(n, partial_->size() - partial_have_));
}

Decoded<void> FrameReader::read_prefix(ByteView& data) {
  const std::size_t take = std::min(data.size(), size_prefix_.size() - prefix_have_);
  std::copy_n(data.begin(), take, size_prefix_.begin() + static_cast<std::ptrdiff_t>(prefix_have_));
  prefix_have_ += take;
  data = data.subspan(take);
  stream_offset_ += take;
  if (prefix_have_ < size_prefix_.size()) return {};
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
  partial_have_ = 0;
  partial_need_ = static_cast<std::size_t>(size);
  ++frames_started_;
  // A peer announcing a large frame and trickling it must not make us hold
  // the whole size up front; most frames fit this at once and never move.
  partial_->reserve(std::min(partial_need_, kFirstReserveBytes));
  return {};
}

// Past the first reservation, straight to the announced size: doubling would
// copy the frame again at each step and leave up to twice it allocated, and
// the memory budget has charged the announced size from the prefix on. The
// reservation is address space only: pages are touched as bytes arrive, or a
// tail step at a time (writable_tail), so a peer announcing 90 MiB and
// sending little holds little.
void FrameReader::reserve_for(std::size_t size) {
  if (size <= partial_->capacity()) return;
  partial_->reserve(partial_need_);
}

void FrameReader::frame_bytes_added(std::size_t n) {
  partial_have_ += n;
  stream_offset_ += n;
  buffered_ += n;
  if (partial_have_ == partial_need_) {
    ready_.push_back(std::move(*partial_));
    partial_.reset();
    partial_have_ = 0;
  }
}

std::optional<FrameBuffer> FrameReader::pop() {
  if (ready_.empty()) return std::nullopt;
  FrameBuffer out = std::move(ready_.front());
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
