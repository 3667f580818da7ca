// A real Prometheus server (Debian's `prometheus`, 2.42) for tests: loopback
// only, a free port, a temporary config and storage directory, a 1 s scrape
// interval over the given targets. Stopped (SIGTERM, then SIGKILL) and its
// directory removed on destruction.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/metrics/http_get.h"

namespace pp::testing {

// A port nobody listens on right now (the kernel's pick for port 0). Racy by
// nature; PrometheusServer retries when its pick was taken meanwhile.
inline std::uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

class PrometheusServer {
 public:
  static constexpr const char* kBinary = "/usr/bin/prometheus";
  static constexpr const char* kJob = "produce-proxy";

  // Starts it and waits (up to `ready_within`) for /-/ready.
  PrometheusServer(const std::vector<std::string>& targets, std::chrono::seconds ready_within) {
    char tmpl[] = "/tmp/pp_prometheus_XXXXXX";
    if (!mkdtemp(tmpl)) return;
    dir_ = tmpl;
    std::ofstream(dir_ / "prometheus.yml") << config(targets);
    for (int attempt = 0; attempt < 3 && !ready_; ++attempt) {
      port_ = free_loopback_port();
      spawn();
      ready_ = eventually(
          [&] {
            if (exited()) return true;
            return http_get(port_, "/-/ready", "GET", std::chrono::seconds(2)).status == 200;
          },
          ready_within, std::chrono::milliseconds(200));
      ready_ = ready_ && !exited();
      if (!ready_) stop();
    }
  }
  ~PrometheusServer() {
    stop();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  bool ready() const { return ready_; }
  std::uint16_t port() const { return port_; }

  // GET /api/v1/query?query=<promql> (URL-encoded here).
  HttpResponse query(const std::string& promql) const {
    return http_get(port_, "/api/v1/query?query=" + url_encode(promql));
  }

  // The value of a one-sample instant-vector answer, as Prometheus prints it
  // ("20"); empty when the result holds no sample (yet).
  static std::string single_value(const std::string& answer_json) {
    const auto at = answer_json.find("\"value\":[");
    if (at == std::string::npos) return {};
    const auto comma = answer_json.find(",\"", at);
    const auto end = answer_json.find('"', comma + 2);
    if (comma == std::string::npos || end == std::string::npos) return {};
    return answer_json.substr(comma + 2, end - comma - 2);
  }

  // The server's own log, for failure messages.
  std::string log() const {
    std::ifstream in(dir_ / "prometheus.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static std::string config(const std::vector<std::string>& targets) {
    std::string out =
        "global:\n"
        "  scrape_interval: 1s\n"
        "  scrape_timeout: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: " +
        std::string(kJob) +
        "\n"
        "    static_configs:\n"
        "      - targets: [";
    for (std::size_t i = 0; i < targets.size(); ++i) out += (i ? ", '" : "'") + targets[i] + "'";
    return out + "]\n";
  }

  static std::string url_encode(const std::string& s) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
      if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
      }
    }
    return out;
  }

  void spawn() {
    const std::vector<std::string> argv = {
        kBinary,
        "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_),
        "--log.level=warn",
    };
    const std::string log_path = (dir_ / "prometheus.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(kBinary, args.data());
      _exit(127);
    }
  }

  bool exited() {
    if (pid_ <= 0) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    return false;
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    if (!eventually([&] { return exited(); }, std::chrono::seconds(10))) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  bool ready_ = false;
};

}  // namespace pp::testing
