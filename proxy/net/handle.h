// Ownership of libuv handles (the CMake cmUVHandlePtr / Node HandleWrap idea):
// the handle lives on the heap and is freed only in uv_close's callback, so an
// owner can be destroyed at any time, even from inside its own callback.
#pragma once

#include <uv.h>

#include <utility>

namespace pp::net {

template <class State>
class HandleOwner {
 public:
  HandleOwner() = default;
  explicit HandleOwner(State* state) : state_(state) {}
  HandleOwner(HandleOwner&& o) noexcept : state_(std::exchange(o.state_, nullptr)) {}
  HandleOwner& operator=(HandleOwner&& o) noexcept {
    if (this != &o) {
      reset();
      state_ = std::exchange(o.state_, nullptr);
    }
    return *this;
  }
  HandleOwner(const HandleOwner&) = delete;
  HandleOwner& operator=(const HandleOwner&) = delete;
  ~HandleOwner() { reset(); }

  State* get() const { return state_; }
  State* operator->() const { return state_; }
  explicit operator bool() const { return state_ != nullptr; }

  // Detaches callbacks at once (none fires after this) and frees the memory
  // when libuv says the handle is closed.
  void reset() {
    State* s = std::exchange(state_, nullptr);
    if (!s) return;
    s->detach();
    auto* h = reinterpret_cast<uv_handle_t*>(&s->handle);
    if (uv_is_closing(h)) return;  // someone else already closes it; it frees itself
    uv_close(h, [](uv_handle_t* closed) {
      auto* state = static_cast<State*>(closed->data);
      // A state with requests still pending in libuv (getaddrinfo) frees itself
      // when the last one completes.
      if constexpr (requires { state->handle_closed(); }) {
        if (!state->handle_closed()) return;
      }
      delete state;
    });
  }

 private:
  State* state_ = nullptr;
};

}  // namespace pp::net
