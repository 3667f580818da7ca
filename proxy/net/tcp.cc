#include "proxy/net/tcp.h"

#include <arpa/inet.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace pp::net {

namespace {

constexpr std::size_t kReadBufferBytes = 64 * 1024;

// One read buffer per loop thread, not per connection: libuv reads into it
// and calls the read callback at once, and on_data copies out what it keeps,
// so 1,000 idle clients don't each hold 64 KiB. It lives on the heap: a
// thread_local array would sit in the static TLS block that glibc carves out
// of every thread's stack, including the small fixed stacks of civetweb's
// HTTP workers, which 64 KiB overflows (tests/daemon/static_tls_test.py).
char* loop_read_buffer() {
  thread_local std::unique_ptr<char[]> buffer;
  if (!buffer) buffer = std::make_unique_for_overwrite<char[]>(kReadBufferBytes);
  return buffer.get();
}

std::string name_of(const sockaddr_storage& ss) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    uv_ip4_name(a, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(a->sin_port));
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
  uv_ip6_name(a, ip, sizeof ip);
  return "[" + std::string(ip) + "]:" + std::to_string(ntohs(a->sin6_port));
}

std::string peer_of(uv_tcp_t* h) {
  sockaddr_storage ss{};
  int len = sizeof ss;
  if (uv_tcp_getpeername(h, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return name_of(ss);
}

bool numeric_address(const HostPort& hp, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  if (uv_ip4_addr(hp.host.c_str(), hp.port, reinterpret_cast<sockaddr_in*>(&out)) == 0) return true;
  return uv_ip6_addr(hp.host.c_str(), hp.port, reinterpret_cast<sockaddr_in6*>(&out)) == 0;
}

// libuv asks for a buffer just before each read and hands it back, filled,
// to on_read at once: nothing can run between the two to move the target.
void alloc_read_buffer(uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
  auto* st = static_cast<TcpConnection::State*>(handle->data);
  st->read_into_target = false;
  if (st->read_target) {
    const std::span<std::uint8_t> target = st->read_target();
    if (!target.empty()) {
      st->read_into_target = true;
      const std::size_t len = std::min<std::size_t>(target.size(), std::numeric_limits<unsigned>::max());
      *buf = uv_buf_init(reinterpret_cast<char*>(target.data()), static_cast<unsigned>(len));
      return;
    }
  }
  *buf = uv_buf_init(loop_read_buffer(), static_cast<unsigned>(kReadBufferBytes));
}

void on_read(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
  auto* st = static_cast<TcpConnection::State*>(stream->data);
  if (n > 0) {
    // Each callback may close or destroy the owner: called from a copy.
    if (st->read_into_target) {
      if (auto cb = st->on_read_into) cb(static_cast<std::size_t>(n));
    } else if (auto cb = st->on_data) {
      cb(ByteView(reinterpret_cast<const std::uint8_t*>(buf->base), static_cast<std::size_t>(n)));
    }
  } else if (n < 0) {
    uv_read_stop(stream);
    st->reading = false;
    st->fail(n == UV_EOF ? 0 : static_cast<int>(n));
  }
}

void start_connect(TcpConnection::State* s, const sockaddr* addr) {
  auto* req = new uv_connect_t;
  req->data = s;
  ++s->pending_requests;
  const int rc = uv_tcp_connect(req, &s->handle, addr, [](uv_connect_t* r, int status) {
    auto* st = static_cast<TcpConnection::State*>(r->data);
    delete r;
    --st->pending_requests;
    if (st->handle_is_closed) {
      if (st->pending_requests == 0) delete st;
      return;
    }
    if (status == 0) st->peer = peer_of(&st->handle);
    if (st->on_connected) {
      auto cb = st->on_connected;
      cb(status);
    }
  });
  if (rc != 0) {
    delete req;
    --s->pending_requests;
    s->fail(rc);
  }
}

// Writes to one connection, in order, through one core: tried at once when
// nothing is queued (most fit the socket buffer, and then no write request
// is allocated), only the rest queued, with whatever owns its bytes
// kept until libuv's callback. A WireFrame's pieces go in one writev, a
// Produce request's batches written where the pipeline built them instead of
// being copied into one request buffer first.

struct QueuedWrite {
  uv_write_t req{};
  QueuedWrite() = default;
  QueuedWrite(const QueuedWrite&) = delete;
  QueuedWrite& operator=(const QueuedWrite&) = delete;
  virtual ~QueuedWrite() = default;
};

template <class Payload>
struct QueuedPayload final : QueuedWrite {
  explicit QueuedPayload(Payload p) : payload(std::move(p)) {}
  Payload payload;
};

struct KeptBytes {
  Bytes bytes;
  std::shared_ptr<void> keep;
};

// What is left of `bufs` once the first `n` bytes are written.
std::span<uv_buf_t> advance(std::span<uv_buf_t> bufs, std::size_t n) {
  while (!bufs.empty() && n >= bufs.front().len) {
    n -= bufs.front().len;
    bufs = bufs.subspan(1);
  }
  if (n > 0 && !bufs.empty()) {
    bufs.front().base += n;
    bufs.front().len -= n;
  }
  return bufs;
}

void on_written(uv_write_t* req, int status) {
  const std::unique_ptr<QueuedWrite> done(static_cast<QueuedWrite*>(req->data));
  auto* state = static_cast<TcpConnection::State*>(req->handle->data);
  if (status != 0 && status != UV_ECANCELED) state->fail(status);
}

// `payload` owns what `bufs` point into, and moving it must leave them where
// they are (a vector's heap buffer, shared owners). Never jumps writes
// already queued.
template <class Payload>
void write_in_order(TcpConnection::State& state, std::span<uv_buf_t> bufs, std::size_t total, Payload&& payload) {
  auto* stream = reinterpret_cast<uv_stream_t*>(&state.handle);
  if (uv_stream_get_write_queue_size(stream) == 0) {
    const int written = uv_try_write(stream, bufs.data(), static_cast<unsigned>(bufs.size()));
    if (written > 0 && static_cast<std::size_t>(written) == total) return;
    if (written > 0) bufs = advance(bufs, static_cast<std::size_t>(written));
  }
  auto w = std::make_unique<QueuedPayload<std::decay_t<Payload>>>(std::forward<Payload>(payload));
  w->req.data = static_cast<QueuedWrite*>(w.get());
  // libuv copies the buffer list; the bytes stay with the payload.
  const int rc = uv_write(&w->req, stream, bufs.data(), static_cast<unsigned>(bufs.size()), on_written);
  if (rc != 0) {
    state.fail(rc);
    return;
  }
  static_cast<void>(w.release());  // on_written owns it now
}

}  // namespace

std::string HostPort::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::expected<HostPort, std::string> parse_host_port(std::string_view text) {
  HostPort out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::unexpected("expected [ipv6]:port");
    }
    out.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::unexpected("expected host:port");
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535) {
    return std::unexpected("port must be a number from 0 to 65535");
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

void TcpConnection::State::fail(int status) {
  if (!open) return;
  open = false;
  auto cb = on_close;
  if (cb) cb(status);
}

TcpConnection TcpConnection::connect(uv_loop_t* loop, const HostPort& to, ConnectCallback on_connected) {
  auto* s = new State;
  uv_tcp_init(loop, &s->handle);
  s->handle.data = s;
  uv_tcp_nodelay(&s->handle, 1);
  s->on_connected = std::move(on_connected);
  s->peer = to.to_string();
  TcpConnection conn(s);

  sockaddr_storage addr;
  if (numeric_address(to, addr)) {
    start_connect(s, reinterpret_cast<const sockaddr*>(&addr));
    return conn;
  }
  auto* req = new uv_getaddrinfo_t;
  req->data = s;
  ++s->pending_requests;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string port = std::to_string(to.port);
  const int rc = uv_getaddrinfo(
      loop, req,
      [](uv_getaddrinfo_t* r, int status, addrinfo* res) {
        auto* st = static_cast<State*>(r->data);
        delete r;
        --st->pending_requests;
        // The owner went away while the name resolved: closed already (then
        // free the state here), or closing, when connecting would re-arm the
        // handle libuv is tearing down (its close callback frees the state).
        if (st->handle_is_closed || uv_is_closing(reinterpret_cast<uv_handle_t*>(&st->handle))) {
          if (st->handle_is_closed && st->pending_requests == 0) delete st;
          uv_freeaddrinfo(res);
          return;
        }
        if (status != 0 || !res) {
          uv_freeaddrinfo(res);
          if (st->on_connected) {
            auto cb = st->on_connected;
            cb(status != 0 ? status : UV_EAI_NONAME);
          }
          return;
        }
        start_connect(st, res->ai_addr);
        uv_freeaddrinfo(res);
      },
      to.host.c_str(), port.c_str(), &hints);
  if (rc != 0) {
    delete req;
    --s->pending_requests;
    // Report asynchronously-equivalent: the caller gets the status right away.
    if (s->on_connected) {
      auto cb = s->on_connected;
      cb(rc);
    }
  }
  return conn;
}

void TcpConnection::set_callbacks(DataCallback on_data, CloseCallback on_close) {
  state_->on_data = std::move(on_data);
  state_->on_close = std::move(on_close);
}

void TcpConnection::set_read_target(ReadTarget target, ReadIntoCallback on_read_into) {
  state_->read_target = std::move(target);
  state_->on_read_into = std::move(on_read_into);
}

void TcpConnection::start_reading() {
  State* s = state_.get();
  if (!s || s->reading || !s->open) return;
  s->reading = true;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&s->handle), alloc_read_buffer, on_read);
}

void TcpConnection::stop_reading() {
  State* s = state_.get();
  if (!s || !s->reading) return;
  s->reading = false;
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&s->handle));
}

bool TcpConnection::reading() const {
  return state_ && state_->reading;
}

std::size_t TcpConnection::write_queue_bytes() const {
  if (!state_) return 0;
  return uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&state_->handle));
}

std::size_t TcpConnection::unread_bytes() const {
  if (!state_ || !state_->open) return 0;
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(&state_->handle), &fd) != 0) return 0;
  int waiting = 0;
  if (::ioctl(fd, FIONREAD, &waiting) != 0 || waiting < 0) return 0;
  return static_cast<std::size_t>(waiting);
}

void TcpConnection::close() {
  state_.reset();
}

bool TcpConnection::is_open() const {
  return state_ && state_->open;
}

std::string TcpConnection::peer_name() const {
  return state_ ? state_->peer : std::string("?");
}

uv_loop_t* TcpConnection::loop() const {
  return state_ ? state_->handle.loop : nullptr;
}

void TcpConnection::write(Bytes data, std::shared_ptr<void> keep) {
  State* s = state_.get();
  if (!s || !s->open || data.empty()) return;
  uv_buf_t whole = uv_buf_init(reinterpret_cast<char*>(data.data()), static_cast<unsigned>(data.size()));
  const std::size_t total = data.size();
  write_in_order(*s, std::span(&whole, 1), total, KeptBytes{std::move(data), std::move(keep)});
}

void TcpConnection::write(WireFrame frame) {
  if (frame.borrowed.empty()) {
    write(std::move(frame.own));
    return;
  }
  State* s = state_.get();
  if (!s || !s->open || frame.empty()) return;
  std::vector<uv_buf_t> bufs;
  bufs.reserve(2 * frame.borrowed.size() + 1);
  frame.for_each_piece([&](ByteView piece) {
    // libuv only reads from a write's buffers.
    bufs.push_back(uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(piece.data())),
                               static_cast<unsigned>(piece.size())));
  });
  const std::size_t total = frame.size();
  write_in_order(*s, bufs, total, std::move(frame));
}

void TcpListener::accept_waiting(State& st) {
  auto* server = reinterpret_cast<uv_stream_t*>(&st.handle);
  auto* c = new TcpConnection::State;
  uv_tcp_init(server->loop, &c->handle);
  c->handle.data = c;
  TcpConnection conn(c);
  // uv_accept also re-arms the listener when libuv had stopped it for us.
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&c->handle)) != 0) return;
  uv_tcp_nodelay(&c->handle, 1);
  c->peer = peer_of(&c->handle);
  if (st.on_accept) st.on_accept(std::move(conn));
}

void TcpListener::pause_accepting() {
  if (state_) state_->paused = true;
}

void TcpListener::resume_accepting() {
  if (!state_ || !state_->paused) return;
  state_->paused = false;
  if (state_->connection_waiting) {
    state_->connection_waiting = false;
    accept_waiting(*state_.get());
  }
}

std::expected<TcpListener, std::string> TcpListener::listen(uv_loop_t* loop, const HostPort& at,
                                                            AcceptCallback on_accept, int backlog) {
  sockaddr_storage addr;
  if (!numeric_address(at, addr)) {
    return std::unexpected("listen address must be a numeric IP: " + at.to_string());
  }
  TcpListener l;
  l.state_ = HandleOwner<State>(new State);
  uv_tcp_init(loop, &l.state_->handle);
  l.state_->handle.data = l.state_.get();
  l.state_->on_accept = std::move(on_accept);
  int rc = uv_tcp_bind(&l.state_->handle, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&l.state_->handle), backlog, [](uv_stream_t* server, int status) {
      auto* st = static_cast<State*>(server->data);
      if (status != 0) return;
      if (st->paused) {
        st->connection_waiting = true;  // libuv now stops polling the listener until uv_accept
        return;
      }
      accept_waiting(*st);
    });
  }
  if (rc != 0) {
    return std::unexpected("cannot listen on " + at.to_string() + ": " + uv_strerror(rc));
  }
  return l;
}

std::uint16_t TcpListener::port() const {
  if (!state_) return 0;
  sockaddr_storage ss{};
  int len = sizeof ss;
  uv_tcp_getsockname(&state_->handle, reinterpret_cast<sockaddr*>(&ss), &len);
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

}  // namespace pp::net
