// A connection a listener accepted, as its session sees it: plaintext (the
// bytes pass through to the TcpConnection) or TLS on the server side
// (net::TlsSession over memory BIOs, on the loop, no threads). The session
// reads and writes plaintext through the same calls either way and never
// sees ciphertext.
//
//   auto c = AcceptedConnection::tls(std::move(tcp), context, pacer, [&](auto failure) {
//     if (failure) { /* log, count, drop c */ return; }
//     /* handshake done: hand c to a session, which sets its callbacks */
//   });
//
// A TLS connection reads from the moment it is made and handshakes; its
// handshake callback runs once, with the failure or without one. Plaintext
// that arrived with the handshake's last flight (a TLS 1.3 client sends its
// first request right behind its Finished) is kept and handed to the data
// callback on a later loop turn once the session reads, never inside
// start_reading().
//
// A TLS handshake's steps that may sign (reading the ClientHello, until the
// server's first flight is out) take a step of the listener's ration
// (HandshakePacer, owned by whoever owns the listener's handshakes): a few
// per loop iteration, the rest waiting first come first served for the next
// iterations, so that a burst of ClientHellos cannot hold up the requests of
// connections already established for all their signatures. A waiting
// connection stops reading and holds the one read it got (at most the
// socket's read buffer). Its handshake callback runs as before, and closing
// it drops it from the wait.
//
// A plaintext connection whose first bytes are a TLS handshake record (a
// client configured for TLS on a plaintext listener) is closed: its
// mismatch callback runs, then its close callback with UV_EPROTO.
//
// Loop thread only. Movable; the callbacks given to it may close or destroy
// it from inside any callback.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/net/handshake_pacer.h"
#include "proxy/net/tcp.h"
#include "proxy/net/tls_session.h"

namespace pp::net {

class AcceptedConnection {
 public:
  using DataCallback = TcpConnection::DataCallback;
  using CloseCallback = TcpConnection::CloseCallback;
  using ReadTarget = TcpConnection::ReadTarget;
  using ReadIntoCallback = TcpConnection::ReadIntoCallback;
  // The handshake's outcome: nullopt when it is done.
  using HandshakeCallback = std::function<void(const std::optional<TlsFailure>& failure)>;

  AcceptedConnection() = default;
  AcceptedConnection(AcceptedConnection&&) noexcept = default;
  AcceptedConnection& operator=(AcceptedConnection&&) noexcept = default;
  AcceptedConnection(const AcceptedConnection&) = delete;
  AcceptedConnection& operator=(const AcceptedConnection&) = delete;
  ~AcceptedConnection();

  // `on_tls_attempt` (may be empty) runs when the first bytes are a TLS
  // handshake record; the connection then closes.
  static AcceptedConnection plaintext(TcpConnection tcp, std::function<void()> on_tls_attempt);
  // Starts reading and handshaking with a server session of `context`,
  // taking its signing steps from `pacer`, which must outlive the handshake
  // (closing the connection ends it). `on_handshake` never runs inside this
  // call. A peer whose first byte is not a TLS handshake record fails at
  // once (TlsFailureKind::kNotTls).
  static AcceptedConnection tls(TcpConnection tcp, std::shared_ptr<TlsContext> context, HandshakePacer& pacer,
                                HandshakeCallback on_handshake);

  // As TcpConnection's. A TLS connection reads ciphertext through the loop's
  // shared buffer and decrypts each record into the span `target` gives (or,
  // when it gives none, into a loop buffer handed to the data callback).
  void set_callbacks(DataCallback on_data, CloseCallback on_close);
  void set_read_target(ReadTarget target, ReadIntoCallback on_read_into);
  void start_reading();
  void stop_reading();
  bool reading() const;
  // Plaintext in; TLS encrypts it and `keep` lives until the ciphertext is written.
  void write(Bytes data, std::shared_ptr<void> keep = nullptr);
  // Bytes queued towards the peer (ciphertext, for TLS).
  std::size_t write_queue_bytes() const;
  std::size_t unread_bytes() const;
  // Closes now (a TLS connection sends close_notify first when it can).
  void close();
  bool is_open() const;
  std::string peer_name() const;

  bool tls() const;
  bool handshake_done() const;
  // "plaintext", "TLSv1.3".
  std::string protocol() const;
  // The verified client certificate's subject CN (TlsSession::peer_common_name).
  std::optional<std::string> peer_common_name() const;
  bool session_reused() const;
  // No byte has come from the peer yet (a port probe that closed at once).
  bool peer_sent_nothing() const;

  struct State;

 private:
  explicit AcceptedConnection(std::shared_ptr<State> state) : state_(std::move(state)) {}
  // Shared with the socket's callbacks (they hold it while they run), so the
  // owner may drop the connection from inside any of them.
  std::shared_ptr<State> state_;
};

}  // namespace pp::net
