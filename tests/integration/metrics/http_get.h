// A blocking HTTP/1.0 GET for tests, bounded in time: enough to read
// /metrics, /healthz, /readyz and Prometheus' query API on loopback. (HTTP/1.0
// with Connection: close, so the body is simply everything up to EOF.)
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace pp::testing {

struct HttpResponse {
  int status = 0;  // 0: no answer (refused, timed out, garbled)
  std::string headers;
  std::string body;
};

inline HttpResponse http_get(std::uint16_t port, const std::string& target, const std::string& method = "GET",
                             std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  HttpResponse response;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return response;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return response;
  }
  const std::string request =
      method + " " + target + " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return response;
  }
  std::string raw;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      close(fd);
      return response;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[16384];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      close(fd);
      return response;
    }
    if (n == 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos || raw.size() < 12) return response;
  response.status = std::stoi(raw.substr(9, 3));
  response.headers = raw.substr(0, end);
  response.body = raw.substr(end + 4);
  return response;
}

// Polls `done()` every `every` until it holds or `limit` passes.
template <class Done>
bool eventually(Done&& done, std::chrono::milliseconds limit,
                std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(static_cast<useconds_t>(every.count() * 1000));
  }
}

}  // namespace pp::testing
