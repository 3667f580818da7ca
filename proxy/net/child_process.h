// A child process run on the loop thread (uv_spawn, no shell, no threads):
// argv[0] looked up in PATH, stdin /dev/null, stdout collected from a pipe
// up to a size cap, stderr inherited. It is killed (SIGKILL) when the
// timeout passes. `done` is called once, from a loop callback, when the
// child has exited and its stdout reached EOF: with the output if it exited
// 0, else with what went wrong (never the output, which may be a secret).
// Destroying the ChildProcess, or stop(), kills a child still running and
// reaps it; `done` is then never called.
//
// For the OAUTHBEARER token_command, which may take seconds: the
// loop keeps serving every other connection meanwhile.
#pragma once

#include <cstddef>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "proxy/net/handle.h"

namespace pp::net {

class ChildProcess {
 public:
  using Done = std::function<void(std::expected<std::string, std::string>)>;

  ChildProcess() = default;
  ~ChildProcess() { stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv; a child still running from an earlier start() is killed
  // first. A spawn failure is reported through `done` too, on a later
  // loop iteration, so callers have one path.
  void start(uv_loop_t* loop, const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output, Done done);
  void stop();
  bool running() const { return state_ != nullptr; }

  struct State;

 private:
  State* state_ = nullptr;  // frees itself once its handles are closed
};

}  // namespace pp::net
