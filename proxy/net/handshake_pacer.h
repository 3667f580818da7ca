// The ration of TLS handshake steps that may sign, for the handshakes of one
// listener. A server's first flight answers the ClientHello with a signature
// by the server's key, the costliest step of a handshake; a listener takes
// at most `steps_per_turn` of them per loop iteration, and the handshakes
// that find the ration spent wait, first come first served, for the next
// iterations (an idle handle runs while any wait), so that a burst of
// ClientHellos cannot hold up the requests of connections already
// established for all their signatures.
//
//   HandshakePacer pacer(loop);                    // one per listener, owned by it
//   if (!pacer.try_take_step()) pacer.wait(weak);  // weak: the connection's Waiter
//   ...                                            // its take_turn() runs on a later iteration
//
// A waiter is held weakly: one that is gone, or no longer wants its turn
// (closed), is skipped and takes no step. Destroying the pacer drops every
// waiter untold and closes its idle handle; it may happen inside a waiter's
// take_turn(). Loop thread only; not copyable or movable (connections under
// way hold its address and must not outlive it while they handshake).
#pragma once

#include <uv.h>

#include <cstddef>
#include <deque>
#include <memory>

#include "proxy/net/handle.h"

namespace pp::net {

class HandshakePacer {
 public:
  // Signing steps one listener takes per loop iteration.
  static constexpr std::size_t kSigningStepsPerTurn = 2;

  // A handshake waiting for its step (held weakly: its owner keeps it).
  class Waiter {
   public:
    virtual ~Waiter() = default;
    // Still wants a step (false: closed meanwhile; it is skipped).
    virtual bool wants_turn() const = 0;
    // Its step, already counted: it may sign now. May close or drop itself,
    // or destroy the pacer.
    virtual void take_turn() = 0;
  };

  explicit HandshakePacer(uv_loop_t* loop, std::size_t steps_per_turn = kSigningStepsPerTurn);
  HandshakePacer(const HandshakePacer&) = delete;
  HandshakePacer& operator=(const HandshakePacer&) = delete;
  HandshakePacer(HandshakePacer&&) = delete;
  HandshakePacer& operator=(HandshakePacer&&) = delete;
  ~HandshakePacer() = default;

  // Counts a step and says it may be taken now: false when this iteration's
  // ration is spent or others wait before the caller (it should wait()).
  bool try_take_step();
  // Queues `waiter` behind the others; its take_turn() runs on a later
  // iteration, never inside this call.
  void wait(std::weak_ptr<Waiter> waiter);
  std::size_t waiting() const { return state_->waiting.size(); }

  // The idle handle and what it serves; freed in its close callback, so the
  // pacer may go while the callback runs.
  struct State {
    uv_idle_t handle{};
    std::size_t steps_per_turn = kSigningStepsPerTurn;
    std::size_t steps = 0;  // taken since the current turn of the queue began
    std::deque<std::weak_ptr<Waiter>> waiting;
    bool detached = false;
    void detach() {
      detached = true;
      waiting.clear();
    }
  };

 private:
  HandleOwner<State> state_;
};

}  // namespace pp::net
