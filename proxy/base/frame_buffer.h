// A received frame's bytes. Unlike a std::vector it grows without zeroing
// (zeroing each frame's tail before a socket read into it costs a pass over
// every received byte; see docs/BENCHMARKS.md), and copies in with one
// memcpy: only bytes already received are ever looked at.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "proxy/base/bytes.h"

namespace pp {

class FrameBuffer {
 public:
  FrameBuffer() = default;
  FrameBuffer(FrameBuffer&& other) noexcept
      : bytes_(std::move(other.bytes_)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  FrameBuffer& operator=(FrameBuffer&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;
  ~FrameBuffer() = default;

  std::uint8_t* data() { return bytes_.get(); }
  const std::uint8_t* data() const { return bytes_.get(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::uint8_t* begin() { return data(); }
  std::uint8_t* end() { return data() + size_; }
  const std::uint8_t* begin() const { return data(); }
  const std::uint8_t* end() const { return data() + size_; }

  // Exactly `n` bytes of room (a budget charges the capacity), keeping the
  // bytes held; never shrinks.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    auto grown = std::make_unique_for_overwrite<std::uint8_t[]>(n);
    if (size_ > 0) std::memcpy(grown.get(), bytes_.get(), size_);
    bytes_ = std::move(grown);
    capacity_ = n;
  }
  // Bytes past the old size are not initialised: the caller writes them.
  void resize_uninitialized(std::size_t n) {
    reserve(n);
    size_ = n;
  }
  void append(ByteView more) {
    if (more.empty()) return;
    if (size_ + more.size() > capacity_) reserve(std::max(size_ + more.size(), 2 * capacity_));
    std::memcpy(bytes_.get() + size_, more.data(), more.size());
    size_ += more.size();
  }

 private:
  std::unique_ptr<std::uint8_t[]> bytes_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace pp
