// A one-shot or repeating libuv timer owned by the loop thread.
#pragma once

#include <cstdint>
#include <functional>

#include "proxy/net/handle.h"

namespace pp::net {

class Timer {
 public:
  Timer() = default;
  explicit Timer(uv_loop_t* loop);

  void start(std::uint64_t timeout_ms, std::uint64_t repeat_ms, std::function<void()> on_fire);
  void stop();
  bool active() const;
  explicit operator bool() const { return static_cast<bool>(state_); }

  struct State {
    uv_timer_t handle{};
    std::function<void()> on_fire;
    void detach() { on_fire = nullptr; }
  };

 private:
  HandleOwner<State> state_;
};

// Milliseconds on the loop's clock (cached per iteration, as libuv does).
std::uint64_t now_ms(uv_loop_t* loop);

}  // namespace pp::net
