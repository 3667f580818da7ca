// The layer between a broker connection's socket and its framing: plaintext
// (bytes pass through) or TLS (net::TlsSession over memory BIOs). The
// connection writes request frames into it and reads decrypted bytes out;
// it never sees ciphertext.
//
// A TLS transport is established once the handshake is done: frames written
// before then are queued in the session and go out encrypted after it, and
// the connection counts the handshake against its connect timeout.
//
// A failure before the broker's first byte of plaintext counts as an auth
// failure even after the handshake: under TLS 1.3 the client's handshake ends
// before the broker has checked the client certificate, so a rejected one
// shows up as an alert (or a close) right after it.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/net/tcp.h"
#include "proxy/net/tls_session.h"

namespace pp::upstream {

// How to reach a broker over TLS; no context = plaintext.
struct TransportSecurity {
  std::shared_ptr<net::TlsContext> tls;
  std::string server_name;  // "" = the broker's host
  bool verify_hostname = true;
};

struct TransportClosed {
  std::string reason;
  // "" unless the TLS handshake failed: its metric reason (tls_certificate, ...).
  std::string_view auth_failure;
};

class Transport {
 public:
  struct Callbacks {
    std::function<void()> on_established;                   // handshake done (plaintext: at once)
    std::function<void(ByteView)> on_data;                  // plaintext from the broker
    std::function<void(const TransportClosed&)> on_closed;  // not for close()
  };

  Transport() = default;
  // Takes over a connected socket and starts reading; a TLS transport sends
  // its ClientHello. Callbacks never run inside this call: on_established
  // of a plaintext transport is the caller's to act on (established()).
  std::expected<void, TransportClosed> start(net::TcpConnection tcp, const TransportSecurity& security,
                                             const std::string& host, Callbacks callbacks);
  void write(Bytes frame);
  // Plain TCP writes the borrowed slices where they lie; TLS encrypts a copy.
  void write(WireFrame frame);
  void close();
  bool established() const { return established_; }
  bool tls() const { return session_ != nullptr; }
  std::string describe() const;  // "plaintext", "TLSv1.3"

 private:
  void on_ciphertext(ByteView data);
  void flush_output();
  void fail(std::string reason, std::string_view auth_failure);
  void fail_tls(const net::TlsFailure& failure);
  bool authenticated() const { return session_ == nullptr || answered_; }

  net::TcpConnection tcp_;
  std::unique_ptr<net::TlsSession> session_;
  Callbacks callbacks_;
  bool established_ = false;
  bool answered_ = false;    // some plaintext has arrived on this session
  std::uint64_t epoch_ = 0;  // bumped by close(): a callback that closed us is noticed
};

}  // namespace pp::upstream
