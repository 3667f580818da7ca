// run_token_command: posix_spawnp with stdout on a pipe, no shell, bounded
// in time and output; the child is killed and reaped on every path.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "proxy/upstream/sasl/token_source.h"

extern char** environ;

namespace pp::upstream::sasl {
namespace {

constexpr std::size_t kMaxTokenOutput = 64 * 1024;

struct Spawned {
  pid_t pid = -1;
  int stdout_fd = -1;
};

std::expected<Spawned, std::string> spawn(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::unexpected(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return std::unexpected(std::string("cannot start: ") + std::strerror(rc));
  }
  return Spawned{pid, fds[0]};
}

// Reads until EOF, the deadline or the size cap; an error string otherwise empty.
std::string read_output(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buffer[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "timed out";
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? "timed out" : std::string("poll: ") + std::strerror(errno);
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("read: ") + std::strerror(errno);
    if (n == 0) return {};
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > kMaxTokenOutput) return "printed more than 64 KiB";
  }
}

// Waits for the child until the deadline (it may close stdout and linger),
// then kills it; always reaps it.
int reap(pid_t pid, std::chrono::steady_clock::time_point deadline, std::string& problem) {
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return status;
    if (std::chrono::steady_clock::now() >= deadline) break;
    ::usleep(5000);
  }
  if (problem.empty()) problem = "timed out";
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::expected<std::string, SaslError> run_token_command(const std::vector<std::string>& argv, int timeout_ms) {
  if (argv.empty() || argv.front().empty()) return std::unexpected(SaslError{"OAUTHBEARER: token_command is empty"});
  const std::string who = "OAUTHBEARER: token_command " + argv.front() + ": ";
  auto child = spawn(argv);
  if (!child) return std::unexpected(SaslError{who + child.error()});
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string problem = read_output(child->stdout_fd, deadline, out);
  ::close(child->stdout_fd);
  const int status = reap(child->pid, problem.empty() ? deadline : std::chrono::steady_clock::now(), problem);
  if (!problem.empty()) {
    return std::unexpected(SaslError{
        who + problem + (problem == "timed out" ? " after " + std::to_string(timeout_ms) + " ms; killed" : "")});
  }
  if (WIFSIGNALED(status))
    return std::unexpected(SaslError{who + "killed by signal " + std::to_string(WTERMSIG(status))});
  if (WEXITSTATUS(status) != 0) {
    return std::unexpected(SaslError{who + "exited with status " + std::to_string(WEXITSTATUS(status))});
  }
  return out;
}

}  // namespace pp::upstream::sasl
