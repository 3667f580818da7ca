// A minimal blocking Kafka client over a POSIX socket, for tests that need to
// control exactly which bytes reach a broker and when (pipelining, malformed
// frames, watching for a dropped response or a closed connection).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include "proxy/protocol/schema.h"
#include "proxy/protocol/wire_reader.h"
#include "proxy/protocol/wire_writer.h"

namespace pp::test_broker::testing {

class BlockingClient {
 public:
  explicit BlockingClient(std::uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    int one = 1;
    if (fd_ >= 0) setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~BlockingClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Request header v1, or v2 (tagged fields) from the message's first
  // flexible version; client_id stays a classic string in both.
  template <Message M>
  bool send(const M& body, std::int16_t version, std::int32_t correlation_id) {
    Bytes out;
    WireWriter w(out);
    const std::size_t size_at = w.reserve_int32();
    w.int16(static_cast<std::int16_t>(M::kApiKey));
    w.int16(version);
    w.int32(correlation_id);
    w.length(4, false, false);
    w.raw(std::string_view("test"));
    if (version >= M::kFlexibleSince) w.uvarint(0);
    encode_body(w, body, version);
    w.patch_int32(size_at, static_cast<std::int32_t>(out.size() - 4));
    return send_raw(out);
  }

  bool send_raw(ByteView bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next frame without its size prefix; nullopt on timeout or close
  // (closed() then tells which).
  std::optional<Bytes> receive_frame(std::chrono::milliseconds timeout) {
    Bytes size_bytes;
    if (!read_exactly(4, size_bytes, timeout)) return std::nullopt;
    WireReader r(size_bytes);
    const std::int32_t size = *r.read_int32();
    Bytes frame;
    if (size < 0 || !read_exactly(static_cast<std::size_t>(size), frame, timeout)) return std::nullopt;
    return frame;
  }

  // Decodes the response header (v0, or v1 for flexible versions except
  // ApiVersions) and the body of M at `version`. RECORDS fields borrow from
  // the frame, which the client keeps until the next receive.
  template <Message M>
  std::optional<M> receive(std::int16_t version, std::int32_t* correlation_id = nullptr,
                           std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto frame = receive_frame(timeout);
    if (!frame) return std::nullopt;
    last_frame_ = std::move(*frame);
    WireReader r(last_frame_);
    auto corr = r.read_int32();
    if (!corr) return std::nullopt;
    if (correlation_id) *correlation_id = *corr;
    if (M::kApiKey != ApiKey::kApiVersions && version >= M::kFlexibleSince) {
      auto tags = r.read_uvarint();
      if (!tags || *tags != 0) return std::nullopt;
    }
    auto body = decode_body<M>(r, version);
    if (!body || !r.empty()) return std::nullopt;
    return *body;
  }

  // True once the broker has closed the connection (EOF or reset) within `timeout`.
  bool wait_closed(std::chrono::milliseconds timeout) {
    Bytes ignored;
    while (read_exactly(1, ignored, timeout)) ignored.clear();
    return closed_;
  }
  bool closed() const { return closed_; }

 private:
  bool read_exactly(std::size_t n, Bytes& out, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    out.reserve(n);
    while (out.size() < n) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      std::uint8_t buf[65536];
      const std::size_t want = std::min(sizeof buf, n - out.size());
      const ssize_t got = ::recv(fd_, buf, want, 0);
      if (got <= 0) {
        closed_ = true;
        return false;
      }
      out.insert(out.end(), buf, buf + got);
    }
    return true;
  }

  int fd_ = -1;
  bool closed_ = false;
  Bytes last_frame_;
};

}  // namespace pp::test_broker::testing
