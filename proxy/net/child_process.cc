#include "proxy/net/child_process.h"

#include <sys/wait.h>

#include <csignal>
#include <utility>

namespace pp::net {

// The process, its stdout pipe and the timeout timer; deleted when the last
// of the three handles is closed. The owner may let go of it at any time
// (detach): then a running child is killed and reaped at once.
struct ChildProcess::State {
  uv_process_t process{};
  uv_pipe_t out{};
  uv_timer_t timer{};
  ChildProcess* owner = nullptr;
  Done done;
  std::string output;
  std::string problem;  // the first thing that went wrong, empty if nothing
  std::size_t max_output = 0;
  int timeout_ms = 0;
  bool process_open = false;  // uv_spawn was called: it initializes the handle even when it fails
  bool spawned = false;
  bool exited = false;
  bool eof = false;
  int open_handles = 0;

  void close_all();
  void maybe_finish();
  void note(std::string what) {
    if (problem.empty()) problem = std::move(what);
  }
};

namespace {

void on_closed(uv_handle_t* handle) {
  auto* s = static_cast<ChildProcess::State*>(handle->data);
  if (--s->open_handles == 0) delete s;
}

void close_handle(void* handle) {
  auto* h = static_cast<uv_handle_t*>(handle);
  if (!uv_is_closing(h)) uv_close(h, on_closed);
}

void on_alloc(uv_handle_t* /*handle*/, std::size_t suggested, uv_buf_t* buf) {
  buf->base = new char[suggested];
  buf->len = suggested;
}

void on_read(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
  auto* s = static_cast<ChildProcess::State*>(stream->data);
  if (n > 0) s->output.append(buf->base, static_cast<std::size_t>(n));
  delete[] buf->base;
  if (n > 0 && s->output.size() > s->max_output) {
    s->note("printed more than " + std::to_string(s->max_output / 1024) + " KiB");
    if (!s->exited) uv_process_kill(&s->process, SIGKILL);
    n = UV_EOF;  // stop reading: what follows is not wanted
  }
  if (n >= 0) return;
  if (n != UV_EOF) s->note(std::string("reading its output: ") + uv_strerror(static_cast<int>(n)));
  uv_read_stop(stream);
  s->eof = true;
  s->maybe_finish();
}

void on_exit(uv_process_t* process, std::int64_t status, int term_signal) {
  auto* s = static_cast<ChildProcess::State*>(process->data);
  s->exited = true;
  if (term_signal != 0) {
    s->note("killed by signal " + std::to_string(term_signal));
  } else if (status != 0) {
    s->note("exited with status " + std::to_string(status));
  }
  s->maybe_finish();
}

// The child leads its own process group (UV_PROCESS_DETACHED calls setsid),
// so -pid reaches everything it started that did not leave the group. Linux
// does not hand out a pid still in use as a group id, so this is safe after
// the leader is reaped too; ESRCH then means nothing was left.
void kill_group(const uv_process_t& process) {
  if (process.pid > 0) uv_kill(-process.pid, SIGKILL);
}

void on_timeout(uv_timer_t* timer) {
  auto* s = static_cast<ChildProcess::State*>(timer->data);
  if (s->spawned && !s->exited) {
    s->note("timed out after " + std::to_string(s->timeout_ms) + " ms; killed");
  } else if (s->spawned) {
    s->note("timed out after " + std::to_string(s->timeout_ms) + " ms waiting for its output to end");
  }
  // The whole group: a background process it started (a forking agent, a
  // script's `&`) is as stuck as the command itself. on_exit follows at once.
  if (s->spawned) kill_group(s->process);
  // Either way stop waiting for EOF: a grandchild may hold stdout open long
  // after the child is gone, and the output is not wanted any more.
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&s->out));
  s->eof = true;
  s->maybe_finish();
}

}  // namespace

void ChildProcess::State::maybe_finish() {
  if (!eof || (spawned && !exited)) return;
  Done finished = std::exchange(done, nullptr);
  if (owner) owner->state_ = nullptr;
  owner = nullptr;
  close_all();
  if (finished) {
    if (problem.empty()) {
      finished(std::move(output));
    } else {
      finished(std::unexpected(problem));
    }
  }
}

void ChildProcess::State::close_all() {
  uv_timer_stop(&timer);
  if (spawned && (!exited || !eof)) kill_group(process);
  if (spawned && !exited) {
    // Closing the handle stops libuv from reaping the child: do it here.
    // SIGKILL cannot be blocked, so this wait is short.
    while (::waitpid(process.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (process_open) close_handle(&process);
  close_handle(&out);
  close_handle(&timer);
}

void ChildProcess::start(uv_loop_t* loop, const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output,
                         Done done) {
  stop();
  auto* s = new State;
  s->owner = this;
  s->done = std::move(done);
  s->max_output = max_output;
  s->timeout_ms = timeout_ms;
  state_ = s;
  s->process.data = s->out.data = s->timer.data = s;
  uv_pipe_init(loop, &s->out, 0);
  uv_timer_init(loop, &s->timer);
  s->open_handles = 2;

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;  // libuv opens /dev/null
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&s->out);
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  uv_process_options_t options{};
  options.exit_cb = on_exit;
  options.file = args[0];
  options.args = args.data();
  options.stdio_count = 3;
  options.stdio = stdio;
  options.flags = UV_PROCESS_DETACHED;  // its own process group: see kill_group
  int rc = UV_EINVAL;
  if (!argv.empty() && !argv.front().empty()) {
    rc = uv_spawn(loop, &s->process, &options);
    s->process_open = true;
    ++s->open_handles;
  }
  if (rc != 0) {
    // Reported from the timer, on a later iteration, like every other outcome.
    s->note(std::string("cannot start: ") + uv_strerror(rc));
    uv_timer_start(&s->timer, on_timeout, 0, 0);
    return;
  }
  s->spawned = true;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&s->out), on_alloc, on_read);
  uv_timer_start(&s->timer, on_timeout, static_cast<std::uint64_t>(timeout_ms), 0);
}

void ChildProcess::stop() {
  State* s = std::exchange(state_, nullptr);
  if (!s) return;
  s->owner = nullptr;
  s->done = nullptr;
  s->close_all();
}

}  // namespace pp::net
