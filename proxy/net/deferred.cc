#include "proxy/net/deferred.h"

#include <utility>

namespace pp::net {

Deferred::Deferred(uv_loop_t* loop) : state_(new State) {
  uv_idle_init(loop, &state_->handle);
  state_->handle.data = state_.get();
}

void Deferred::post(std::function<void()> fn) {
  State* s = state_.get();
  s->queue.push_back(std::move(fn));
  if (uv_is_active(reinterpret_cast<uv_handle_t*>(&s->handle))) return;
  uv_idle_start(&s->handle, [](uv_idle_t* h) {
    auto* st = static_cast<State*>(h->data);
    // Take the batch first: what these callbacks post runs next iteration.
    // The owner may be destroyed by a callback; its queue is then cleared by
    // detach() and the handle frees itself, so only the local batch is used.
    // The state itself outlives this callback (freed in uv_close's).
    std::vector<std::function<void()>> batch = std::exchange(st->queue, std::move(st->spare));
    uv_idle_stop(h);
    for (auto& fn : batch) fn();
    batch.clear();
    st->spare = std::move(batch);
  });
}

}  // namespace pp::net
