// Cross-thread wake-up of the loop (uv_async_t): the only way other threads
// (metrics server, signal watchers) reach loop-owned state ("One loop thread
// owns all proxy state", docs/design/ARCHITECTURE.md, rules of the house).
#pragma once

#include <functional>

#include "proxy/net/handle.h"

namespace pp::net {

class Async {
 public:
  Async() = default;
  Async(uv_loop_t* loop, std::function<void()> on_wake);

  // Thread-safe; several sends before the loop runs coalesce into one wake.
  void send();

  struct State {
    uv_async_t handle{};
    std::function<void()> on_wake;
    void detach() { on_wake = nullptr; }
  };

 private:
  HandleOwner<State> state_;
};

class Signal {
 public:
  Signal() = default;
  Signal(uv_loop_t* loop, int signum, std::function<void(int)> on_signal);

  struct State {
    uv_signal_t handle{};
    std::function<void(int)> on_signal;
    void detach() { on_signal = nullptr; }
  };

 private:
  HandleOwner<State> state_;
};

}  // namespace pp::net
