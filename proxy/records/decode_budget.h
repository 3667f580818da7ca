// What one client request may decode to in memory ("Bounded everything",
// docs/design/ARCHITECTURE.md, rules of the house): decompressed bytes and the
// in-memory records and headers made from them. Wire bytes are bounded by
// max_request_bytes, but their decoded form is not the same size: an empty
// header is 2 bytes on the wire and a 40-byte RecordHeaderView in memory, and
// inside a compressed batch the wire bytes say nothing at all. The decoders
// charge what they are about to allocate before allocating it, so an over-cap
// request fails without the memory ever being taken, and in time linear in what
// was read.
#pragma once

#include <cstddef>

namespace pp {

class DecodeBudget {
 public:
  explicit DecodeBudget(std::size_t cap) : cap_(cap) {}

  // Takes n items of `each` bytes; false, and nothing taken, when they do not
  // fit in what is left (the product is never formed, so it cannot overflow).
  bool take(std::size_t n, std::size_t each = 1) {
    if (each != 0 && n > left() / each) return false;
    used_ += n * each;
    return true;
  }

  std::size_t cap() const { return cap_; }
  std::size_t used() const { return used_; }
  std::size_t left() const { return cap_ - used_; }

 private:
  std::size_t cap_;
  std::size_t used_ = 0;
};

}  // namespace pp
