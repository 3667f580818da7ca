#include "proxy/net/timer.h"

namespace pp::net {

Timer::Timer(uv_loop_t* loop) : state_(new State) {
  uv_timer_init(loop, &state_->handle);
  state_->handle.data = state_.get();
}

void Timer::start(std::uint64_t timeout_ms, std::uint64_t repeat_ms, std::function<void()> on_fire) {
  state_->on_fire = std::move(on_fire);
  uv_timer_start(
      &state_->handle,
      [](uv_timer_t* t) {
        auto* s = static_cast<State*>(t->data);
        if (s->on_fire) {
          // Copy: the callback may restart or destroy this timer.
          auto cb = s->on_fire;
          cb();
        }
      },
      timeout_ms, repeat_ms);
}

void Timer::stop() {
  if (state_) uv_timer_stop(&state_->handle);
}

bool Timer::active() const {
  return state_ && uv_is_active(reinterpret_cast<const uv_handle_t*>(&state_->handle));
}

std::uint64_t now_ms(uv_loop_t* loop) {
  return uv_now(loop);
}

}  // namespace pp::net
