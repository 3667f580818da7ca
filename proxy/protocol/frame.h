// Kafka framing: an int32 size, then that many bytes. The reader gathers a
// frame's bytes in a buffer of its own, either copied in by append() or read
// there by the socket (writable_tail() and commit()), and refuses a size over
// the configured maximum (or negative) from the prefix alone, before buffering.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <optional>
#include <span>

#include "proxy/base/bytes.h"
#include "proxy/base/frame_buffer.h"
#include "proxy/protocol/decode_error.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

class FrameReader {
 public:
  explicit FrameReader(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}
  // The limit for frames whose size prefix is read from now on (a client
  // listener raises it once a client has authenticated).
  void set_max_frame_bytes(std::size_t max_frame_bytes) { max_frame_bytes_ = max_frame_bytes; }

  // Feeds bytes as they arrive. On an error the stream is unusable (the peer
  // must be disconnected): a bad size prefix leaves no way to resynchronise.
  Decoded<void> append(ByteView data);

  // Where a socket may read the partial frame's next bytes itself, saving the
  // copy append() makes. Empty unless a frame's prefix was read and its body is
  // unfinished; else at most kTailStepBytes, never past the announced end, so
  // whatever is read there belongs to this frame. Bytes written there count
  // only once commit(n) says so; the span stays valid until the next append()
  // or commit().
  std::span<std::uint8_t> writable_tail();
  // The first `n` bytes of the last writable_tail() now hold frame bytes.
  void commit(std::size_t n);

  // The next complete frame (without its size prefix), oldest first.
  std::optional<FrameBuffer> pop();

  std::size_t ready_frames() const { return ready_.size(); }
  // Bytes held: complete frames plus the partial one.
  std::size_t buffered_bytes() const { return buffered_; }
  // Bytes the partial frame announced and has not received yet: a memory
  // budget may reserve a frame from its prefix on, as Kafka's MemoryPool
  // does, while the buffer itself grows as bytes come.
  std::size_t partial_remaining() const { return partial_ ? partial_need_ - partial_have_ : 0; }
  // Bytes of the newest `n` complete frames (those one append just completed).
  std::size_t newest_ready_bytes(std::size_t n) const {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < n && i < ready_.size(); ++i) sum += ready_[ready_.size() - 1 - i].size();
    return sum;
  }
  std::size_t partial_bytes() const { return partial_ ? partial_have_ : 0; }
  // A frame's size prefix was read and its last byte was not.
  bool in_partial_frame() const { return partial_.has_value(); }
  // Frames whose size prefix was read, ever: tells a caller a new one began.
  std::uint64_t frames_started() const { return frames_started_; }
  // Total bytes consumed from the stream so far (for error offsets).
  std::size_t stream_offset() const { return stream_offset_; }
  // Bytes of the partial frame's buffer handed out so far, received or
  // given to a socket as a tail (for tests of what a trickling peer makes us touch).
  std::size_t partial_touched() const { return partial_ ? partial_->size() : 0; }

  // The partial frame's buffer: the first reservation (most frames fit it
  // and never move) and the tail handed to a socket at a time, which bounds
  // what a peer announcing a large frame and sending little makes us touch.
  static constexpr std::size_t kFirstReserveBytes = 1024 * 1024;
  static constexpr std::size_t kTailStepBytes = 256 * 1024;

 private:
  Decoded<void> read_prefix(ByteView& data);
  void reserve_for(std::size_t size);
  void frame_bytes_added(std::size_t n);

  std::size_t max_frame_bytes_;
  std::array<std::uint8_t, 4> size_prefix_{};
  std::size_t prefix_have_ = 0;
  // Sized to what was handed out as a tail; the bytes past partial_have_
  // are uninitialised room a socket may read into, not yet the frame's.
  std::optional<FrameBuffer> partial_;
  std::size_t partial_have_ = 0;
  std::size_t partial_need_ = 0;
  std::deque<FrameBuffer> ready_;
  std::size_t buffered_ = 0;
  std::size_t stream_offset_ = 0;
  std::uint64_t frames_started_ = 0;
  bool failed_ = false;
};

// Prepends the int32 size prefix to an encoded header+body, in place.
Bytes frame(Bytes header_and_body);

}  // namespace pp
