// Whole framed messages: size prefix + header + body, built in one buffer
// (or, for requests to a broker, a WireFrame that borrows the batches).
#pragma once

#include <algorithm>

#include "proxy/protocol/header.h"
#include "proxy/protocol/schema.h"

namespace pp {

template <Message M>
Bytes encode_request_frame(const RequestHeader& header, const M& body) {
  Bytes out;
  // A Produce frame is mostly its batches: reserved once from the body's
  // size hint, so they are copied in once instead of again at every doubling
  // (docs/BENCHMARKS.md).
  if constexpr (requires { body.encoded_size_hint(); }) {
    out.reserve(64 + (header.client_id ? header.client_id->size() : 0) + body.encoded_size_hint());
  }
  WireWriter w(out);
  const std::size_t size_at = w.reserve_int32();
  encode_request_header(w, header);
  encode_body(w, body, header.api_version);
  w.patch_int32(size_at, static_cast<std::int32_t>(out.size() - 4));
  return out;
}

// A RecordsView that has an owner and at least this many bytes is borrowed
// instead of copied (WireWriter::payload): the buffer list, the owner's
// reference count and more iovecs cost about what copying this much does, so
// borrowing breaks even near this size and saves more the larger the payload
// (docs/BENCHMARKS.md).
inline constexpr std::size_t kMinBorrowedPayloadBytes = 2048;
// Of a payload in pieces (an upstream batch that borrows record values,
// which are at least this large): what the batch borrowed stays borrowed,
// the record bytes between its values are copied.
inline constexpr std::size_t kMinBorrowedPieceBytes = 512;

// As encode_request_frame, but the batches a Produce request carries (with
// an owner) stay where they are: the socket writes them from there.
template <Message M>
WireFrame encode_request_wire_frame(const RequestHeader& header, const M& body) {
  WireFrame frame;
  WireWriter w;
  w.borrow_into(frame, kMinBorrowedPayloadBytes, kMinBorrowedPieceBytes);
  // What stays in `own` is the header and whatever is copied (batches under
  // the borrowing size): the hint bounds it, and large batches are borrowed.
  std::size_t reserve = 256;
  if constexpr (requires { body.encoded_size_hint(); })
    reserve = std::min<std::size_t>(body.encoded_size_hint(), 65536);
  frame.own.reserve(64 + (header.client_id ? header.client_id->size() : 0) + reserve);
  const std::size_t size_at = w.reserve_int32();
  encode_request_header(w, header);
  encode_body(w, body, header.api_version);
  w.patch_int32(size_at, static_cast<std::int32_t>(w.written() - 4));
  return frame;
}

inline constexpr std::size_t kResponseFrameReserve = 256;

template <Message M>
Bytes encode_response_frame(std::int32_t correlation_id, std::int16_t version, const M& body) {
  Bytes out;
  // Most responses fit (a Produce answer for a few partitions is about 100
  // bytes); grown from empty, each cost four or five reallocations.
  out.reserve(kResponseFrameReserve);
  WireWriter w(out);
  const std::size_t size_at = w.reserve_int32();
  encode_response_header(w, correlation_id, M::kApiKey, version);
  encode_body(w, body, version);
  w.patch_int32(size_at, static_cast<std::int32_t>(out.size() - 4));
  return out;
}

}  // namespace pp
