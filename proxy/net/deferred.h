// Work to run on a later loop iteration: the one primitive for "later, never
// inside the call that caused it" (upstream_port.h's callbacks, the front
// end's session passes, the driver's coalesced poll), so a caller never sees
// its own callback re-enter it. Timers are for work due at a time.
//
// A uv_idle_t rather than a 0 ms timer: libuv runs a timer restarted from its
// own callback again in the same pass, so a retry that fails at once could
// spin without ever reaching the poll phase. The idle callback runs once per
// iteration and takes only what was queued before it started.
#pragma once

#include <uv.h>

#include <functional>
#include <vector>

#include "proxy/net/handle.h"

namespace pp::net {

class Deferred {
 public:
  explicit Deferred(uv_loop_t* loop);

  void post(std::function<void()> fn);
  // Drops what is queued and not yet running.
  void cancel() { state_->queue.clear(); }
  std::size_t pending() const { return state_->queue.size(); }

  struct State {
    uv_idle_t handle{};
    std::vector<std::function<void()>> queue;
    // The last batch's storage, emptied: the next batch's queue without an
    // allocation (a post per request grew a fresh vector every pass).
    std::vector<std::function<void()>> spare;
    void detach() { queue.clear(); }
  };

 private:
  HandleOwner<State> state_;
};

}  // namespace pp::net
