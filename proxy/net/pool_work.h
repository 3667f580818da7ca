// Work for libuv's thread pool (uv_queue_work): a computation too slow for
// the loop thread (a password hash) runs on a pool thread, and its
// continuation on the loop thread. The request owns both functions until the
// continuation has run; whatever the continuation touches that may be gone by
// then (a session) it must reach through a weak reference of its own. The
// pool is libuv's, shared with its other users (getaddrinfo for the brokers'
// names): callers bound how much they queue at once.
#pragma once

#include <uv.h>

#include <functional>

namespace pp::net {

// Queues `work` on `loop`'s pool; `done(true)` then runs on the loop thread,
// or `done(false)` when the work was cancelled before it started. Returns
// false, with nothing queued and neither function run, when libuv refused
// the request. Loop thread only; `work` must not touch loop-owned state.
[[nodiscard]] bool queue_work(uv_loop_t* loop, std::function<void()> work, std::function<void(bool ran)> done);

}  // namespace pp::net
