#include "proxy/net/handshake_pacer.h"

#include <utility>

namespace pp::net {

namespace {

// One turn: a fresh ration, and as many waiters as it allows, oldest first.
// A waiter's turn may destroy the pacer (detach() empties the queue and the
// state outlives this callback), so the state is checked after each.
void run_turn(uv_idle_t* idle) {
  auto* state = static_cast<HandshakePacer::State*>(idle->data);
  state->steps = 0;
  while (!state->detached && state->steps < state->steps_per_turn && !state->waiting.empty()) {
    const std::shared_ptr<HandshakePacer::Waiter> next = state->waiting.front().lock();
    state->waiting.pop_front();
    if (!next || !next->wants_turn()) continue;
    ++state->steps;
    next->take_turn();
  }
  if (state->detached || state->waiting.empty()) uv_idle_stop(idle);
}

}  // namespace

HandshakePacer::HandshakePacer(uv_loop_t* loop, std::size_t steps_per_turn) : state_(new State) {
  uv_idle_init(loop, &state_->handle);
  state_->handle.data = state_.get();
  state_->steps_per_turn = steps_per_turn;
}

bool HandshakePacer::try_take_step() {
  State* s = state_.get();
  if (!s->waiting.empty() || s->steps >= s->steps_per_turn) return false;
  ++s->steps;
  return true;
}

void HandshakePacer::wait(std::weak_ptr<Waiter> waiter) {
  State* s = state_.get();
  s->waiting.push_back(std::move(waiter));
  if (uv_is_active(reinterpret_cast<uv_handle_t*>(&s->handle)) == 0) uv_idle_start(&s->handle, run_turn);
}

}  // namespace pp::net
