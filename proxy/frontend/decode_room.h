// "Bounded everything" (docs/design/ARCHITECTURE.md): what a Produce request
// decodes to (decompressed bytes, record and header views) is charged to the
// budget's room, not only to the per-request cap. With less room than the cap
// while the pipeline holds records it will give back, the request decodes into
// the room; if that is not enough it is parked until the room grows, not
// refused. With nothing to give back, waiting would wait for nothing (and two
// such requests could wait for each other's frames): the request decodes into
// the room plus a fixed overdraft, and an entry that needs more is refused with
// a retriable error. A connection under its fair share decodes in the headroom
// it was admitted in (ClientSession::decode_room).
#pragma once

#include <cstddef>

#include "proxy/frontend/client_session.h"

namespace pp {

struct DecodeRoom {
  std::size_t max_decoded_bytes = 0;
  bool may_wait = false;  // a request over max_decoded_bytes parks instead of being refused
  std::size_t cap = 0;    // the per-request cap
  // The limit is the budget's room (and overdraft), not the request's cap: a
  // request over it may fit later.
  bool by_room() const { return max_decoded_bytes < cap; }
};

inline DecodeRoom decode_room(ClientSession& session) {
  const FrontendContext& ctx = session.context();
  const std::size_t cap = ctx.config.max_decoded_bytes_per_request;
  const std::size_t room = session.decode_room();
  if (room >= cap) return {cap, false, cap};
  if (ctx.sink.memory_budget().draining() > 0) return {room, true, cap};
  const std::size_t overdraft = ctx.config.decode_overdraft_bytes;
  if (overdraft >= cap - room) return {cap, false, cap};
  return {room + overdraft, false, cap};
}

}  // namespace pp
