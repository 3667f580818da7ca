// The listener's password checks (a PLAIN login's PBKDF2, whose cost the
// users file's iteration count sets) run off the loop thread, on libuv's
// thread pool, so a flood of logins cannot stall the connections being
// served. At most kMaxInFlight run at once, leaving the pool's other threads
// to its other users (the brokers' name lookups); the rest wait in arrival
// order. The queue is bounded by the connections: a session has at most one
// check submitted (it reads no further request until the check concludes).
//
// Each check's continuation runs on the loop thread with the check's result,
// or nullopt when the pool cancelled it. The continuation must find its
// session through a weak reference: the connection may have closed meanwhile.
// Checks queued or running when this object goes still run, and their
// continuations are still called (the shared state outlives this object).
// Loop thread only.
#pragma once

#include <uv.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace pp {

class PasswordChecks {
 public:
  static constexpr std::size_t kMaxInFlight = 2;

  using Check = std::function<bool()>;
  using Done = std::function<void(std::optional<bool> passed)>;

  explicit PasswordChecks(uv_loop_t* loop);
  PasswordChecks(const PasswordChecks&) = delete;
  PasswordChecks& operator=(const PasswordChecks&) = delete;

  // Runs `check` on the pool (or, when libuv refuses the request, in place),
  // then `done` on the loop thread; never `done` inside this call unless the
  // pool refused.
  void submit(Check check, Done done);
  std::size_t in_flight() const { return state_->in_flight; }
  std::size_t waiting() const { return state_->waiting.size(); }

 private:
  struct Job {
    Check check;
    Done done;
  };
  struct State {
    uv_loop_t* loop = nullptr;
    std::size_t in_flight = 0;
    std::deque<Job> waiting;
  };
  static void start(const std::shared_ptr<State>& state, Job job);

  std::shared_ptr<State> state_;
};

}  // namespace pp
