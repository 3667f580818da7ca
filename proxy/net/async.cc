#include "proxy/net/async.h"

namespace pp::net {

Async::Async(uv_loop_t* loop, std::function<void()> on_wake) : state_(new State) {
  state_->on_wake = std::move(on_wake);
  uv_async_init(loop, &state_->handle, [](uv_async_t* a) {
    auto* s = static_cast<State*>(a->data);
    if (s->on_wake) s->on_wake();
  });
  state_->handle.data = state_.get();
}

void Async::send() {
  if (state_) uv_async_send(&state_->handle);
}

Signal::Signal(uv_loop_t* loop, int signum, std::function<void(int)> on_signal) : state_(new State) {
  state_->on_signal = std::move(on_signal);
  uv_signal_init(loop, &state_->handle);
  state_->handle.data = state_.get();
  uv_signal_start(
      &state_->handle,
      [](uv_signal_t* h, int sig) {
        auto* s = static_cast<State*>(h->data);
        if (s->on_signal) s->on_signal(sig);
      },
      signum);
}

}  // namespace pp::net
