// A frame to send as one run of bytes, made of its own bytes with borrowed
// slices inserted at given offsets: the built batches of a Produce request
// go to the socket where they lie instead of being copied into the request
// (scatter-gather writes). Each slice's owner keeps its bytes alive until
// the frame is written or dropped.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "proxy/base/bytes.h"

namespace pp {

struct WireFrame {
  struct Borrowed {
    std::size_t at = 0;  // offset in `own` the slice goes before
    ByteView bytes;
    std::shared_ptr<const void> owner;
  };

  Bytes own;
  std::vector<Borrowed> borrowed;  // ascending `at`
  std::size_t owner_slice = 0;     // of `borrowed`, the slice holding the last owner borrowed from

  WireFrame() = default;
  explicit WireFrame(Bytes bytes) : own(std::move(bytes)) {}

  // Borrows `bytes` to go before own[at] (at least the last slice's `at`).
  // A run of slices of one owner holds it once, in its first slice: the
  // frame keeps them all until it is written or dropped.
  void borrow(std::size_t at, ByteView bytes, const std::shared_ptr<const void>& owner) {
    // Bounds-checked, not just non-empty: `borrowed` is public, so a caller
    // that shrinks it without resetting `owner_slice` must not read past it.
    const bool same_owner = owner_slice < borrowed.size() && !borrowed[owner_slice].owner.owner_before(owner) &&
                            !owner.owner_before(borrowed[owner_slice].owner);
    if (!same_owner) owner_slice = borrowed.size();
    borrowed.push_back(Borrowed{at, bytes, same_owner ? nullptr : owner});
  }

  std::size_t size() const {
    std::size_t n = own.size();
    for (const auto& b : borrowed) n += b.bytes.size();
    return n;
  }
  bool empty() const { return size() == 0; }

  // The pieces in wire order, empty ones skipped: f(ByteView).
  template <class F>
  void for_each_piece(F&& f) const {
    std::size_t from = 0;
    for (const auto& b : borrowed) {
      if (b.at > from) f(ByteView(own).subspan(from, b.at - from));
      if (!b.bytes.empty()) f(b.bytes);
      from = b.at;
    }
    if (own.size() > from) f(ByteView(own).subspan(from));
  }

  // One buffer (the TLS path encrypts a copy anyway; tests compare bytes).
  Bytes flatten() const {
    if (borrowed.empty()) return own;
    Bytes out;
    out.reserve(size());
    for_each_piece([&](ByteView piece) { out.insert(out.end(), piece.begin(), piece.end()); });
    return out;
  }
};

}  // namespace pp
