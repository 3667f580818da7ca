// A libuv loop on its own thread that beats a Health every 200 ms, as the
// daemon's loop does, and can be told to block (a stuck callback) for a while.
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "metrics/health.h"

namespace pp::testing {

class LoopThread {
 public:
  explicit LoopThread(Health& health) : health_(health) {
    uv_loop_init(&loop_);
    loop_.data = this;
    uv_timer_init(&loop_, &heartbeat_);
    uv_timer_start(
        &heartbeat_, [](uv_timer_t* t) { static_cast<LoopThread*>(t->loop->data)->health_.beat(); },
        static_cast<std::uint64_t>(Health::kBeatInterval.count()),
        static_cast<std::uint64_t>(Health::kBeatInterval.count()));
    uv_async_init(&loop_, &stall_, [](uv_async_t* a) {
      auto* self = static_cast<LoopThread*>(a->loop->data);
      std::this_thread::sleep_for(std::chrono::milliseconds(self->stall_ms_.load()));
      self->stalls_done_.fetch_add(1);
    });
    uv_async_init(&loop_, &stop_, [](uv_async_t* a) {
      auto* self = static_cast<LoopThread*>(a->loop->data);
      uv_close(reinterpret_cast<uv_handle_t*>(&self->heartbeat_), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&self->stall_), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&self->stop_), nullptr);
    });
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }
  ~LoopThread() {
    uv_async_send(&stop_);
    thread_.join();
    uv_loop_close(&loop_);
  }
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  // Blocks the loop thread inside a callback for `ms` (asynchronously).
  void stall(std::chrono::milliseconds ms) {
    stall_ms_.store(static_cast<int>(ms.count()));
    uv_async_send(&stall_);
  }
  int stalls_done() const { return stalls_done_.load(); }

 private:
  Health& health_;
  uv_loop_t loop_{};
  uv_timer_t heartbeat_{};
  uv_async_t stall_{};
  uv_async_t stop_{};
  std::atomic<int> stall_ms_{0};
  std::atomic<int> stalls_done_{0};
  std::thread thread_;
};

}  // namespace pp::testing
