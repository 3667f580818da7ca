// TLS over the owner's buffers: OpenSSL never touches a socket. The owner
// feeds it the ciphertext the socket read, writes plaintext into it, and
// sends what take_output() returns; so TLS runs on the libuv loop like
// everything else, with no threads and no blocking ("One loop thread owns
// all proxy state", docs/design/ARCHITECTURE.md, rules of the house).
//
//   TlsSession s(context, TlsSession::Role::kClient, "kafka-1", true);
//   s.start();                  send(s.take_output());   // ClientHello
//   on socket bytes:  auto r = s.feed(bytes);  deliver(r->plaintext);
//                     send(s.take_output());              // always: alerts, Finished, tickets
//   s.write(frame);             send(s.take_output());   // queued until the handshake is done
//
// OpenSSL reads the fed ciphertext where it lies (a BIO of our own over the
// caller's span, not a memory BIO that copies it in first) and writes its
// records straight onto the output buffer. feed() with a PlaintextSink
// decrypts each record into a span the owner chooses (a frame's own buffer),
// so plaintext is copied once, out of OpenSSL's record buffer. Between
// feeds and writes a session holds no record buffers: an idle connection
// costs the SSL object alone.
//
// Every SSL_ERROR_WANT_READ/WRITE is a "come back later": a handshake step
// or an SSL_write that wants more bytes from the peer is retried after the
// next feed(), a write with the same buffer (OpenSSL requires it).
#pragma once

#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "proxy/base/bytes.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace pp::net {

// What kind of TLS failure, for logs and the auth-failure metric's reason.
enum class TlsFailureKind : std::uint8_t {
  kCertificate,  // the peer's chain did not verify: untrusted, expired, ...
  kHostname,     // the chain verified but names another host
  kHandshake,    // anything else: protocol, alert, peer closed mid-handshake
  kLocal,        // our own files: unreadable CA, key that does not match
  // Server side: the context requires a client certificate and the peer
  // sent none (client_auth = "required").
  kNoPeerCertificate,
  // Server side: the peer's first bytes were no TLS record (a plaintext
  // client on a TLS listener).
  kNotTls,
};
std::string_view metric_reason(TlsFailureKind kind);  // "tls_certificate", ...

struct TlsFailure {
  TlsFailureKind kind = TlsFailureKind::kHandshake;
  std::string reason;  // OpenSSL's words; never key material
};

// The files a client context is built from; "" = not used (CA: the system bundle).
struct TlsFiles {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// Whether a server asks its clients for a certificate. kRequested verifies
// one that is sent (an untrusted one fails the handshake) and accepts none.
enum class ClientCertificates : std::uint8_t { kNone, kRequested, kRequired };

// The files a server context is built from: a certificate chain and its key,
// and the CA bundle that client certificates must chain to ("" = no client
// certificates: client_auth must be kNone).
struct TlsServerFiles {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  ClientCertificates client_auth = ClientCertificates::kNone;
};

// An SSL_CTX, shared by every session made from it. Rebuilding one (SIGHUP)
// leaves sessions already running on the old one untouched.
class TlsContext {
 public:
  // TLS 1.2 minimum, peer verification on, renegotiation off.
  static std::expected<std::shared_ptr<TlsContext>, std::string> client(const TlsFiles& files);
  // TLS 1.2 minimum, renegotiation off, the key checked against the
  // certificate, and session resumption on (TLS 1.3 tickets, TLS 1.2 session
  // ids and tickets) under this context's own ticket key: a session from an
  // earlier context (before a reload) is not resumed, just fully handshaken.
  static std::expected<std::shared_ptr<TlsContext>, std::string> server(const TlsServerFiles& files);
  // For tests and tools that play the broker: certificate chain + key, and a
  // client CA that makes client certificates required.
  static std::expected<std::shared_ptr<TlsContext>, std::string> server(const std::string& cert_file,
                                                                        const std::string& key_file,
                                                                        const std::string& client_ca_file = "");
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

// What a session's BIOs read from and write to (tls_session.cc), owned by
// the session: OpenSSL holds a pointer to it for the session's life.
struct TlsBioBuffers {
  ByteView borrowed;  // the ciphertext feed() was given, while it runs
  Bytes kept;         // ciphertext kept from earlier feeds, read before `borrowed`
  std::size_t kept_offset = 0;
  Bytes output;  // ciphertext for take_output()
};

class TlsSession {
 public:
  enum class Role : std::uint8_t { kClient, kServer };
  struct Fed {
    Bytes plaintext;           // everything decrypted, across as many records as arrived
    bool peer_closed = false;  // close_notify received
  };
  // Where feed() puts plaintext: `room` gives the span the next bytes go to
  // (never empty; one call decrypts at most one record, 16 KiB, into it), and
  // `took(n)` says its first n bytes now hold plaintext, returning false to
  // stop reading (the owner closed). Both may write to the session.
  struct PlaintextSink {
    std::function<std::span<std::uint8_t>()> room;
    std::function<bool(std::size_t)> took;
  };

  // server_name: SNI (not sent for an IP literal, RFC 6066 3) and, when
  // verify_hostname, the name or address the certificate must carry.
  TlsSession(std::shared_ptr<TlsContext> context, Role role, const std::string& server_name, bool verify_hostname);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Begins the handshake (a client's ClientHello lands in take_output()).
  std::expected<void, TlsFailure> start();
  // Takes the ciphertext, moves the handshake on, and once it is done
  // decrypts everything that arrived, into `sink`, until OpenSSL wants more
  // bytes or the sink stops. Ciphertext not yet read (a record that
  // straddles feeds, or what a stopped sink left) is kept for the next call.
  // Returns whether close_notify arrived.
  std::expected<bool, TlsFailure> feed(ByteView ciphertext, const PlaintextSink& sink);
  // The same, all the plaintext into one buffer.
  std::expected<Fed, TlsFailure> feed(ByteView ciphertext);
  // Queued while the handshake runs; encrypted once it is done.
  std::expected<void, TlsFailure> write(Bytes plaintext);
  // Ciphertext to send, possibly empty. Call after every other call.
  Bytes take_output();
  bool handshake_done() const { return handshake_done_; }
  std::size_t queued_plaintext_bytes() const;
  // Sends close_notify (into take_output()).
  void shutdown();
  std::string protocol() const;  // "TLSv1.3"
  // The subject CN of the peer's verified certificate (the last CN when the
  // subject has several); nullopt without a verified certificate, or when
  // the CN is empty or holds a NUL byte. Valid once the handshake is done.
  std::optional<std::string> peer_common_name() const;
  // The handshake resumed an earlier session (no certificate exchange).
  bool session_reused() const;

 private:
  std::expected<void, TlsFailure> advance_handshake();
  std::expected<void, TlsFailure> flush_writes();
  std::expected<bool, TlsFailure> read_all(const PlaintextSink& sink);
  void keep_unread();
  void release_buffers();
  TlsFailure failure(int ssl_error, std::string_view during) const;

  std::shared_ptr<TlsContext> context_;
  SSL* ssl_ = nullptr;
  TlsBioBuffers io_;
  bool handshake_done_ = false;
  std::deque<Bytes> pending_writes_;  // front may be partly written: pending_offset_
  std::size_t pending_offset_ = 0;
};

}  // namespace pp::net
