// Big-endian appender for Kafka's wire primitives. Writing is ours, so it
// cannot fail; sizes that must be known up front are patched afterwards.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/base/wire_frame.h"

namespace pp {

class WireWriter {
 public:
  WireWriter() = default;
  explicit WireWriter(Bytes& out) : out_(&out) {}
  WireWriter(const WireWriter&) = delete;
  WireWriter& operator=(const WireWriter&) = delete;

  Bytes& buffer() { return *out_; }
  std::size_t size() const { return out_->size(); }

  void int8(std::int8_t v) { be(v); }
  void int16(std::int16_t v) { be(v); }
  void int32(std::int32_t v) { be(v); }
  void int64(std::int64_t v) { be(v); }
  void uint16(std::uint16_t v) { be(v); }
  void uint32(std::uint32_t v) { be(v); }
  void float64(double d) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    be(bits);
  }
  void boolean(bool b) { int8(b ? 1 : 0); }

  void uvarint(std::uint32_t v) { leb128(v); }
  void varint(std::int32_t v) {
    leb128(static_cast<std::uint32_t>((static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31)));
  }
  void varlong(std::int64_t v) { leb128((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }

  void raw(ByteView b) { out_->insert(out_->end(), b.begin(), b.end()); }
  void raw(std::string_view s) { out_->insert(out_->end(), s.begin(), s.end()); }

  // Writes into `frame.own`, and a payload that has an owner and at least
  // `min_bytes` is borrowed into `frame` where it lies instead of copied (a
  // smaller one costs less copied than as one more iovec). A payload already in
  // pieces (a batch that borrows values) borrows each piece of at least
  // `min_piece_bytes`: its values stay where they lie, the few bytes between
  // them are copied.
  void borrow_into(WireFrame& frame, std::size_t min_bytes, std::size_t min_piece_bytes) {
    out_ = &frame.own;
    frame_ = &frame;
    min_borrow_bytes_ = min_bytes;
    min_piece_bytes_ = min_piece_bytes;
  }
  void payload(ByteView b, const std::shared_ptr<const void>& owner) { borrow_or_copy(b, owner, min_borrow_bytes_); }
  void payload(const WireFrame& pieces, const std::shared_ptr<const void>& owner) {
    if (pieces.borrowed.empty()) {
      payload(ByteView(pieces.own), owner);
      return;
    }
    // At most one slice per borrowed piece: the list grows at most once per
    // batch, and geometrically (an exact reserve would reallocate per batch).
    auto& slices = frame_->borrowed;
    if (const std::size_t need = slices.size() + pieces.borrowed.size(); slices.capacity() < need) {
      slices.reserve(std::max(need, 2 * slices.capacity()));
    }
    pieces.for_each_piece([&](ByteView piece) { borrow_or_copy(piece, owner, min_piece_bytes_); });
  }
  // Bytes written so far, borrowed ones included (a frame's size prefix).
  std::size_t written() const { return out_->size() + borrowed_bytes_; }

  // Length prefix for a present value (see WireReader::read_length).
  void length(std::size_t len, bool compact, bool wide) {
    // Our own invariant: callers never hand us a string over int16 or a blob
    // over int32 (the front end bounds requests far below that).
    assert(wide ? len <= 0x7fffffffu : len <= 0x7fffu);
    if (compact) {
      uvarint(static_cast<std::uint32_t>(len + 1));
    } else if (wide) {
      int32(static_cast<std::int32_t>(len));
    } else {
      int16(static_cast<std::int16_t>(len));
    }
  }
  void null_length(bool compact, bool wide) {
    if (compact) {
      uvarint(0);
    } else if (wide) {
      int32(-1);
    } else {
      int16(-1);
    }
  }

  // Reserve an int32 and fill it later (frame sizes, batch lengths).
  std::size_t reserve_int32() {
    const std::size_t at = out_->size();
    out_->resize(at + 4);
    return at;
  }
  void patch_int32(std::size_t at, std::int32_t v) { put_be(out_->data() + at, v); }
  void patch_uint32(std::size_t at, std::uint32_t v) { put_be(out_->data() + at, v); }

  template <class T>
  static void put_be(std::uint8_t* p, T v) {
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      p[sizeof(T) - 1 - i] = static_cast<std::uint8_t>(u & 0xff);
      u = static_cast<U>(u >> 8);
    }
  }

 private:
  void borrow_or_copy(ByteView b, const std::shared_ptr<const void>& owner, std::size_t min_bytes) {
    if (frame_ == nullptr || !owner || b.size() < min_bytes) {
      raw(b);
      return;
    }
    frame_->borrow(out_->size(), b, owner);
    borrowed_bytes_ += b.size();
  }

  template <class T>
  void be(T v) {
    const std::size_t at = out_->size();
    out_->resize(at + sizeof(T));
    put_be(out_->data() + at, v);
  }
  void leb128(std::uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<std::uint8_t>(v));
  }

  Bytes owned_;
  Bytes* out_ = &owned_;
  WireFrame* frame_ = nullptr;
  std::size_t min_borrow_bytes_ = 0;
  std::size_t min_piece_bytes_ = 0;
  std::size_t borrowed_bytes_ = 0;
};

}  // namespace pp
