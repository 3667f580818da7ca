// Kafka framing: an int32 size, then that many bytes. The reader copies socket
// bytes straight into a buffer sized for the frame, and refuses a size over
// the configured maximum (or negative) from the prefix alone, before buffering.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <optional>

#include "proxy/base/bytes.h"
#include "proxy/protocol/decode_error.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

class FrameReader {
 public:
  explicit FrameReader(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}

  // Feeds bytes as they arrive. On an error the stream is unusable (the peer
  // must be disconnected): a bad size prefix leaves no way to resynchronise.
  Decoded<void> append(ByteView data);

  // The next complete frame (without its size prefix), oldest first.
  std::optional<Bytes> pop();

  std::size_t ready_frames() const { return ready_.size(); }
  // Bytes held: complete frames plus the partial one.
  std::size_t buffered_bytes() const { return buffered_; }
  // Bytes the partial frame announced and has not received yet: a memory
  // budget may reserve a frame from its prefix on, as Kafka's MemoryPool
  // does, while the buffer itself grows as bytes come.
  std::size_t partial_remaining() const { return partial_ ? partial_need_ - partial_->size() : 0; }
  // Bytes of the newest `n` complete frames (those one append just completed).
  std::size_t newest_ready_bytes(std::size_t n) const {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < n && i < ready_.size(); ++i) sum += ready_[ready_.size() - 1 - i].size();
    return sum;
  }
  std::size_t partial_bytes() const { return partial_ ? partial_->size() : 0; }
  // A frame's size prefix was read and its last byte was not.
  bool in_partial_frame() const { return partial_.has_value(); }
  // Frames whose size prefix was read, ever: tells a caller a new one began.
  std::uint64_t frames_started() const { return frames_started_; }
  // Total bytes consumed from the stream so far (for error offsets).
  std::size_t stream_offset() const { return stream_offset_; }

 private:
  std::size_t max_frame_bytes_;
  std::array<std::uint8_t, 4> size_prefix_{};
  std::size_t prefix_have_ = 0;
  std::optional<Bytes> partial_;
  std::size_t partial_need_ = 0;
  std::deque<Bytes> ready_;
  std::size_t buffered_ = 0;
  std::size_t stream_offset_ = 0;
  std::uint64_t frames_started_ = 0;
  bool failed_ = false;
};

// Prepends the int32 size prefix to an encoded header+body, in place.
Bytes frame(Bytes header_and_body);

}  // namespace pp
