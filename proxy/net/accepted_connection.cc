#include "proxy/net/accepted_connection.h"

#include <memory>
#include <utility>

#include "proxy/net/timer.h"

namespace pp::net {

namespace {

// A TLS record's first byte: content type 22, handshake (RFC 8446 5.1). A
// Kafka request starts with its size, whose first byte is 0 below 16 MiB.
constexpr std::uint8_t kTlsHandshakeRecord = 0x16;
constexpr std::uint8_t kTlsMajorVersion = 0x03;

bool starts_like_tls(ByteView data) {
  return !data.empty() && data[0] == kTlsHandshakeRecord && (data.size() < 2 || data[1] == kTlsMajorVersion);
}

// One TLS record's plaintext at most (RFC 8446 5.1).
constexpr std::size_t kRecordPlaintextBytes = 16 * 1024;

// Where a record is decrypted when the session names no buffer of its own:
// one per loop thread, as the socket's read buffer is (tcp.cc), since the
// data callback copies out what it keeps before the next record lands.
std::span<std::uint8_t> loop_plaintext_buffer() {
  thread_local std::unique_ptr<std::uint8_t[]> buffer;
  if (!buffer) buffer = std::make_unique_for_overwrite<std::uint8_t[]>(kRecordPlaintextBytes);
  return {buffer.get(), kRecordPlaintextBytes};
}

}  // namespace

// Everything the connection is; the socket's callbacks hold it (weakly, and
// strongly while they run).
struct AcceptedConnection::State final : std::enable_shared_from_this<State>, HandshakePacer::Waiter {
  TcpConnection tcp;
  std::unique_ptr<TlsSession> session;  // null: plaintext
  HandshakePacer* pacer = nullptr;      // TLS, until the handshake is over: the listener's ration
  DataCallback on_data;
  CloseCallback on_close;
  ReadTarget read_target;  // TLS: where the session wants a record decrypted
  ReadIntoCallback on_read_into;
  bool into_target = false;  // the span the sink last gave came from read_target
  HandshakeCallback on_handshake;
  std::function<void()> on_tls_attempt;
  Bytes early;     // plaintext that came with the handshake, not yet handed over
  Bytes held;      // the peer's first handshake bytes, read while waiting for a signing step
  Timer handover;  // hands `early` over on a later loop turn
  bool first_byte_seen = false;
  bool handshake_reported = false;
  bool answered = false;    // the session has sent its first flight (TLS)
  bool want_reads = false;  // the session asked to read (TLS, after the handshake)
  bool open = true;
  uv_loop_t* loop = nullptr;

  void attach_socket() {
    std::weak_ptr<State> weak = weak_from_this();
    tcp.set_callbacks(
        [weak](ByteView data) {
          if (auto self = weak.lock()) self->on_socket_data(data);
        },
        [weak](int status) {
          if (auto self = weak.lock()) self->on_socket_closed(status);
        });
  }

  void on_socket_data(ByteView data) {
    const bool first = !first_byte_seen;
    first_byte_seen = true;
    if (session == nullptr) {
      on_plaintext(data, first);
      return;
    }
    if (first && data[0] != kTlsHandshakeRecord) {
      fail_handshake(
          TlsFailure{TlsFailureKind::kNotTls,
                     "the first bytes are no TLS handshake record: a plaintext client on the TLS listener?"});
      return;
    }
    if (!handshake_reported && !answered && !may_sign_now()) {
      wait_for_turn(data);
      return;
    }
    on_ciphertext(data);
  }

  // Takes a signing step of the listener's ration unless it has none left
  // this turn or others wait before this one.
  bool may_sign_now() const { return pacer == nullptr || pacer->try_take_step(); }

  // Keeps `data` and stops reading: a waiting connection holds one read's
  // bytes at most, until its turn comes.
  void wait_for_turn(ByteView data) {
    held.insert(held.end(), data.begin(), data.end());
    tcp.stop_reading();
    pacer->wait(std::weak_ptr<HandshakePacer::Waiter>(weak_from_this()));
  }

  bool wants_turn() const override { return open; }

  // Its turn (a signing step already taken): reads again, then handshakes.
  void take_turn() override {
    Bytes data = std::exchange(held, Bytes());
    tcp.start_reading();
    on_ciphertext(data);
  }

  void on_plaintext(ByteView data, bool first) {
    if (first && on_tls_attempt && starts_like_tls(data)) {
      auto attempt = on_tls_attempt;
      auto closed = on_close;
      close();
      attempt();
      if (closed) closed(UV_EPROTO);
      return;
    }
    if (auto cb = on_data) cb(data);
  }

  void on_ciphertext(ByteView data) {
    if (!handshake_reported) {
      on_handshake_bytes(data);
      return;
    }
    // What came with the handshake goes first.
    if (!early.empty()) deliver(std::exchange(early, Bytes()));
    if (!open) return;
    auto peer_closed = session->feed(data, data_sink());
    flush_output(nullptr);  // alerts, tickets; answers written meanwhile went out already
    if (!open) return;
    if (!peer_closed) {
      close_with(UV_EPROTO);
    } else if (*peer_closed) {
      close_with(0);
    }
  }

  void on_handshake_bytes(ByteView data) {
    // Plaintext right behind the client's Finished is kept for later.
    const TlsSession::PlaintextSink keep_early{loop_plaintext_buffer, [this](std::size_t n) {
                                                 const auto bytes = loop_plaintext_buffer().first(n);
                                                 early.insert(early.end(), bytes.begin(), bytes.end());
                                                 return true;
                                               }};
    auto peer_closed = session->feed(data, keep_early);
    flush_output(nullptr);  // alerts, Finished, tickets
    if (!peer_closed) {
      fail_handshake(peer_closed.error());
      return;
    }
    if (!session->handshake_done()) return;
    handshake_reported = true;
    pacer = nullptr;
    // The session reads once it is set up: nothing may arrive before.
    tcp.stop_reading();
    if (*peer_closed) {
      fail_handshake(TlsFailure{TlsFailureKind::kHandshake, "the client closed the TLS session at once"});
      return;
    }
    if (auto cb = on_handshake) cb(std::nullopt);
  }

  // Each record goes straight into the span the session's read target names
  // (a frame's unfilled body), else into the loop's buffer and on to the
  // data callback; either callback may close the connection, which stops it.
  TlsSession::PlaintextSink data_sink() {
    return {[this] {
              into_target = false;
              if (read_target) {
                const std::span<std::uint8_t> target = read_target();
                if (!target.empty()) {
                  into_target = true;
                  return target;
                }
              }
              return loop_plaintext_buffer();
            },
            [this](std::size_t n) {
              if (!open) return false;
              if (into_target) {
                if (auto cb = on_read_into) cb(n);
              } else {
                deliver(loop_plaintext_buffer().first(n));
              }
              return open;
            }};
  }

  void deliver(ByteView plaintext) {
    if (auto cb = on_data) cb(plaintext);
  }

  void on_socket_closed(int status) {
    open = false;
    if (session != nullptr && !handshake_reported) {
      fail_handshake(TlsFailure{TlsFailureKind::kHandshake,
                                status == 0
                                    ? std::string("the client closed the connection during the TLS handshake")
                                    : std::string("socket error during the TLS handshake: ") + uv_strerror(status)});
      return;
    }
    if (auto cb = on_close) cb(status);
  }

  void fail_handshake(const TlsFailure& failure) {
    handshake_reported = true;
    auto cb = on_handshake;
    close();
    if (cb) cb(failure);
  }

  void close_with(int status) {
    auto cb = on_close;
    close();
    if (cb) cb(status);
  }

  void flush_output(std::shared_ptr<void> keep) {
    Bytes out = session->take_output();
    if (out.empty()) return;
    answered = true;
    tcp.write(std::move(out), std::move(keep));
  }

  void close() {
    if (session != nullptr && open && handshake_reported) {
      session->shutdown();
      flush_output(nullptr);
    }
    open = false;
    want_reads = false;
    pacer = nullptr;
    on_data = nullptr;
    on_close = nullptr;
    read_target = nullptr;
    on_read_into = nullptr;
    on_handshake = nullptr;
    on_tls_attempt = nullptr;
    held = Bytes();
    handover = Timer();
    tcp.close();
  }

  void start_reading() {
    if (!open) return;
    want_reads = true;
    tcp.start_reading();
    if (early.empty() || handover) return;
    // Never inside start_reading: the session is in the middle of deciding.
    handover = Timer(loop);
    std::weak_ptr<State> weak = weak_from_this();
    handover.start(0, 0, [weak] {
      auto self = weak.lock();
      if (!self) return;
      self->handover = Timer();
      if (self->want_reads && self->open && !self->early.empty()) self->deliver(std::exchange(self->early, Bytes()));
    });
  }
};

AcceptedConnection::~AcceptedConnection() {
  close();
}

AcceptedConnection AcceptedConnection::plaintext(TcpConnection tcp, std::function<void()> on_tls_attempt) {
  auto state = std::make_shared<State>();
  state->loop = tcp.loop();
  state->tcp = std::move(tcp);
  state->on_tls_attempt = std::move(on_tls_attempt);
  state->handshake_reported = true;
  state->attach_socket();
  return AcceptedConnection(std::move(state));
}

AcceptedConnection AcceptedConnection::tls(TcpConnection tcp, std::shared_ptr<TlsContext> context,
                                           HandshakePacer& pacer, HandshakeCallback on_handshake) {
  auto state = std::make_shared<State>();
  state->loop = tcp.loop();
  state->tcp = std::move(tcp);
  state->pacer = &pacer;
  state->on_handshake = std::move(on_handshake);
  state->session = std::make_unique<TlsSession>(std::move(context), TlsSession::Role::kServer, "", false);
  state->attach_socket();
  if (auto started = state->session->start(); !started) {
    // Reported on a later turn, as promised: a failed SSL_new is rare enough.
    State* s = state.get();
    s->handover = Timer(s->loop);
    std::weak_ptr<State> weak = state;
    s->handover.start(0, 0, [weak, failure = started.error()] {
      if (auto self = weak.lock()) self->fail_handshake(failure);
    });
    return AcceptedConnection(std::move(state));
  }
  state->tcp.start_reading();
  return AcceptedConnection(std::move(state));
}

void AcceptedConnection::set_callbacks(DataCallback on_data, CloseCallback on_close) {
  state_->on_data = std::move(on_data);
  state_->on_close = std::move(on_close);
}

void AcceptedConnection::set_read_target(ReadTarget target, ReadIntoCallback on_read_into) {
  if (state_->session == nullptr) {
    state_->tcp.set_read_target(std::move(target), std::move(on_read_into));
    return;
  }
  state_->read_target = std::move(target);
  state_->on_read_into = std::move(on_read_into);
}

void AcceptedConnection::start_reading() {
  if (!state_) return;
  if (state_->session == nullptr) {
    state_->tcp.start_reading();
    return;
  }
  state_->start_reading();
}

void AcceptedConnection::stop_reading() {
  if (!state_) return;
  state_->want_reads = false;
  state_->tcp.stop_reading();
}

bool AcceptedConnection::reading() const {
  return state_ && state_->tcp.reading();
}

void AcceptedConnection::write(Bytes data, std::shared_ptr<void> keep) {
  State* s = state_.get();
  if (s == nullptr || !s->open || data.empty()) return;
  if (s->session == nullptr) {
    s->tcp.write(std::move(data), std::move(keep));
    return;
  }
  if (auto written = s->session->write(std::move(data)); !written) {
    // A write fails only on a broken session: the peer hears nothing more.
    auto self = state_;
    self->close_with(UV_EPROTO);
    return;
  }
  s->flush_output(std::move(keep));
}

std::size_t AcceptedConnection::write_queue_bytes() const {
  if (!state_) return 0;
  const std::size_t queued = state_->session ? state_->session->queued_plaintext_bytes() : 0;
  return state_->tcp.write_queue_bytes() + queued;
}

std::size_t AcceptedConnection::unread_bytes() const {
  return state_ ? state_->tcp.unread_bytes() : 0;
}

void AcceptedConnection::close() {
  if (state_) state_->close();
}

bool AcceptedConnection::is_open() const {
  return state_ && state_->open && state_->tcp.is_open();
}

std::string AcceptedConnection::peer_name() const {
  return state_ ? state_->tcp.peer_name() : std::string("?");
}

bool AcceptedConnection::tls() const {
  return state_ && state_->session != nullptr;
}

bool AcceptedConnection::handshake_done() const {
  return state_ && (state_->session == nullptr || state_->session->handshake_done());
}

std::string AcceptedConnection::protocol() const {
  if (!tls()) return "plaintext";
  return state_->session->protocol();
}

std::optional<std::string> AcceptedConnection::peer_common_name() const {
  if (!tls()) return std::nullopt;
  return state_->session->peer_common_name();
}

bool AcceptedConnection::session_reused() const {
  return tls() && state_->session->session_reused();
}

bool AcceptedConnection::peer_sent_nothing() const {
  return state_ && !state_->first_byte_seen;
}

}  // namespace pp::net
