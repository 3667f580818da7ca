// Work to run on a later loop iteration. Callbacks promised to run "later,
// never inside the call that caused them" (upstream_port.h) go through here,
// so a caller never sees its own callback re-enter it.
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

namespace pp::upstream {

class Deferred {
 public:
  explicit Deferred(uv_loop_t* loop);

  void post(std::function<void()> fn);
  std::size_t pending() const { return state_->queue.size(); }

  struct State {
    uv_idle_t handle{};
    std::vector<std::function<void()>> queue;
    void detach() { queue.clear(); }
  };

 private:
  net::HandleOwner<State> state_;
};

}  // namespace pp::upstream
