#include "proxy/frontend/password_checks.h"

#include <utility>

#include "proxy/net/pool_work.h"

namespace pp {

PasswordChecks::PasswordChecks(uv_loop_t* loop) : state_(std::make_shared<State>()) {
  state_->loop = loop;
}

void PasswordChecks::submit(Check check, Done done) {
  Job job{std::move(check), std::move(done)};
  if (state_->in_flight >= kMaxInFlight) {
    state_->waiting.push_back(std::move(job));
    return;
  }
  start(state_, std::move(job));
}

void PasswordChecks::start(const std::shared_ptr<State>& state, Job job) {
  ++state->in_flight;
  auto result = std::make_shared<bool>(false);
  auto check = std::make_shared<Check>(std::move(job.check));
  auto done = std::make_shared<Done>(std::move(job.done));
  const bool queued = net::queue_work(
      state->loop, [check, result] { *result = (*check)(); },
      [state, result, done](bool ran) {
        --state->in_flight;
        (*done)(ran ? std::optional<bool>(*result) : std::nullopt);
        if (!state->waiting.empty() && state->in_flight < kMaxInFlight) {
          Job next = std::move(state->waiting.front());
          state->waiting.pop_front();
          start(state, std::move(next));
        }
      });
  if (queued) return;
  --state->in_flight;
  (*done)((*check)());
}

}  // namespace pp
