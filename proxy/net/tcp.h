// TCP over libuv: a listener and a connection whose writes own their buffers
// until libuv is done with them, with read pause/resume for back-pressure.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/base/wire_frame.h"
#include "proxy/net/handle.h"

namespace pp::net {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;

  std::string to_string() const;  // "h:p", "[v6]:p"
  bool operator==(const HostPort&) const = default;
};

// "host:port", "[::1]:port"; the error text says what is wrong.
std::expected<HostPort, std::string> parse_host_port(std::string_view text);

class TcpConnection {
 public:
  using DataCallback = std::function<void(ByteView)>;
  // status 0: orderly EOF; otherwise a libuv error code (uv_strerror).
  using CloseCallback = std::function<void(int status)>;
  using ConnectCallback = std::function<void(int status)>;
  // Where the next read may land instead of the loop's shared read buffer, so
  // its bytes need no copy out of it (a partial frame's unfilled tail). An
  // empty span means the shared buffer and DataCallback.
  using ReadTarget = std::function<std::span<std::uint8_t>()>;
  // The first n bytes of the span ReadTarget last gave now hold read bytes.
  using ReadIntoCallback = std::function<void(std::size_t n)>;

  TcpConnection() = default;

  // Resolves (numeric addresses without a lookup) and connects.
  static TcpConnection connect(uv_loop_t* loop, const HostPort& to, ConnectCallback on_connected);

  void set_callbacks(DataCallback on_data, CloseCallback on_close);
  // Optional: without it every read goes through the shared buffer.
  void set_read_target(ReadTarget target, ReadIntoCallback on_read_into);
  void start_reading();
  void stop_reading();
  bool reading() const;

  // `keep` lives until libuv is done with the bytes (a memory charge).
  void write(Bytes data, std::shared_ptr<void> keep = nullptr);
  // The frame's pieces in one writev, its borrowed slices written where they
  // lie (tcp.cc); the frame is kept until libuv is done with it.
  void write(WireFrame frame);
  std::size_t write_queue_bytes() const;
  // Bytes the peer sent that the kernel holds and we have not read yet
  // (FIONREAD); 0 when closed or unknown.
  std::size_t unread_bytes() const;

  // Closes now; queued writes are cancelled. on_close is not called for a
  // close we asked for.
  void close();
  bool is_open() const;
  std::string peer_name() const;
  // The loop the connection runs on; null for a default-constructed one.
  uv_loop_t* loop() const;

  struct State;

 private:
  explicit TcpConnection(State* s) : state_(s) {}
  friend class TcpListener;
  HandleOwner<State> state_;
};

struct TcpConnection::State {
  uv_tcp_t handle{};
  DataCallback on_data;
  CloseCallback on_close;
  ConnectCallback on_connected;
  ReadTarget read_target;
  ReadIntoCallback on_read_into;
  std::string peer;
  bool reading = false;
  bool read_into_target = false;  // the buffer libuv reads into came from read_target
  bool open = true;
  bool handle_is_closed = false;
  int pending_requests = 0;  // getaddrinfo / connect in flight

  void detach() {
    on_data = nullptr;
    on_close = nullptr;
    on_connected = nullptr;
    read_target = nullptr;
    on_read_into = nullptr;
    open = false;
  }
  bool handle_closed() {
    handle_is_closed = true;
    return pending_requests == 0;
  }
  void fail(int status);
};

class TcpListener {
 public:
  using AcceptCallback = std::function<void(TcpConnection)>;

  TcpListener() = default;
  static std::expected<TcpListener, std::string> listen(uv_loop_t* loop, const HostPort& at, AcceptCallback on_accept,
                                                        int backlog = 511);
  std::uint16_t port() const;  // the bound port, useful with port 0
  void close() { state_.reset(); }
  // While paused, new connections wait in the kernel's backlog instead of
  // becoming sessions: libuv holds the one socket it took and stops polling
  // the listener until it is accepted, so nothing is refused or lost.
  void pause_accepting();
  void resume_accepting();
  bool accepting_paused() const { return state_ && state_->paused; }

  struct State {
    uv_tcp_t handle{};
    AcceptCallback on_accept;
    bool paused = false;
    bool connection_waiting = false;  // libuv holds one, unaccepted
    void detach() { on_accept = nullptr; }
  };

 private:
  static void accept_waiting(State& st);
  HandleOwner<State> state_;
};

}  // namespace pp::net
