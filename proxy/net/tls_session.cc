#include "proxy/net/tls_session.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace pp::net {

namespace {

// The most plaintext one TLS record carries (RFC 8446 5.1, RFC 5246 6.2.1):
// room for one whole record, so SSL_read never stops inside one for want of
// space.
constexpr std::size_t kMaxRecordPlaintext = 16 * 1024;

// The session's one BIO, read and write: reads come from the ciphertext
// kept from earlier feeds, then from the span feed() is running with,
// where it lies; writes go onto the output buffer. Never blocks: no bytes is
// "retry later", like a non-blocking socket.
int session_bio_read(BIO* bio, char* out, int len) {
  auto* io = static_cast<TlsBioBuffers*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const auto want = static_cast<std::size_t>(std::max(len, 0));
  std::size_t n = 0;
  if (io->kept_offset < io->kept.size()) {
    n = std::min(want, io->kept.size() - io->kept_offset);
    std::memcpy(out, io->kept.data() + io->kept_offset, n);
    io->kept_offset += n;
    if (io->kept_offset == io->kept.size()) {
      io->kept.clear();
      io->kept_offset = 0;
    }
  }
  if (n < want && !io->borrowed.empty()) {
    const std::size_t m = std::min(want - n, io->borrowed.size());
    std::memcpy(out + n, io->borrowed.data(), m);
    io->borrowed = io->borrowed.subspan(m);
    n += m;
  }
  if (n == 0) {
    BIO_set_retry_read(bio);
    return -1;
  }
  return static_cast<int>(n);
}

int session_bio_write(BIO* bio, const char* in, int len) {
  auto* io = static_cast<TlsBioBuffers*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (len <= 0) return 0;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(in);
  io->output.insert(io->output.end(), bytes, bytes + len);
  return len;
}

long session_bio_ctrl(BIO* bio, int cmd, long /*num*/, void* /*ptr*/) {
  const auto* io = static_cast<const TlsBioBuffers*>(BIO_get_data(bio));
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
      return static_cast<long>(io->kept.size() - io->kept_offset + io->borrowed.size());
    case BIO_CTRL_WPENDING:
      return static_cast<long>(io->output.size());
    default:
      return 0;
  }
}

int session_bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// Made once per process, never freed: every session's BIO is of this kind.
const BIO_METHOD* session_bio_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "produce-proxy TLS session");
    if (m == nullptr) return m;
    BIO_meth_set_read(m, session_bio_read);
    BIO_meth_set_write(m, session_bio_write);
    BIO_meth_set_ctrl(m, session_bio_ctrl);
    BIO_meth_set_create(m, session_bio_create);
    return m;
  }();
  return method;
}

// The oldest error on this thread's OpenSSL queue, in OpenSSL's words, and
// the queue emptied (it is per thread, and stale entries mislead later calls).
// `first`, when given, receives that error's code (0: none).
std::string drain_error_queue(unsigned long* first = nullptr) {
  std::string text;
  if (first != nullptr) *first = 0;
  while (const unsigned long e = ERR_get_error()) {
    if (text.empty()) {
      if (first != nullptr) *first = e;
      std::array<char, 256> buf{};
      ERR_error_string_n(e, buf.data(), buf.size());
      text = buf.data();
    }
  }
  return text;
}

std::string files_error(std::string_view what, const std::string& path) {
  const std::string why = drain_error_queue();
  return std::string(what) + " " + path + ": " + (why.empty() ? "unreadable" : why);
}

bool is_ip_literal(const std::string& host) {
  std::array<unsigned char, 16> addr{};
  return inet_pton(AF_INET, host.c_str(), addr.data()) == 1 || inet_pton(AF_INET6, host.c_str(), addr.data()) == 1;
}

std::expected<void, std::string> load_client_files(SSL_CTX* ctx, const TlsFiles& files) {
  if (files.ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) return std::unexpected(files_error("system CA bundle", ""));
  } else if (SSL_CTX_load_verify_locations(ctx, files.ca_file.c_str(), nullptr) != 1) {
    return std::unexpected(files_error("ca_file", files.ca_file));
  }
  if (files.cert_file.empty() != files.key_file.empty()) {
    return std::unexpected(std::string("cert_file and key_file go together: set both or neither"));
  }
  if (files.cert_file.empty()) return {};
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert_file.c_str()) != 1) {
    return std::unexpected(files_error("cert_file", files.cert_file));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return std::unexpected(files_error("key_file", files.key_file));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return std::unexpected(files_error("key_file does not match cert_file", files.key_file));
  }
  return {};
}

SSL_CTX* new_context(const SSL_METHOD* method) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Renegotiation is an old attack surface; Kafka never asks for it.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  // A write retried after WANT_* may come from a deque that grew meanwhile.
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  return ctx;
}

}  // namespace

std::string_view metric_reason(TlsFailureKind kind) {
  switch (kind) {
    case TlsFailureKind::kCertificate:
      return "tls_certificate";
    case TlsFailureKind::kHostname:
      return "tls_hostname";
    case TlsFailureKind::kHandshake:
      return "tls_handshake";
    case TlsFailureKind::kLocal:
      return "tls_local";
    case TlsFailureKind::kNoPeerCertificate:
      return "tls_no_certificate";
    case TlsFailureKind::kNotTls:
      return "tls_not_tls";
  }
  return "tls_handshake";
}

std::expected<std::shared_ptr<TlsContext>, std::string> TlsContext::client(const TlsFiles& files) {
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_client_method());
  if (ctx == nullptr) return std::unexpected("SSL_CTX_new: " + drain_error_queue());
  std::shared_ptr<TlsContext> owner(new TlsContext(ctx));
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (auto loaded = load_client_files(ctx, files); !loaded) return std::unexpected(loaded.error());
  return owner;
}

std::expected<std::shared_ptr<TlsContext>, std::string> TlsContext::server(const std::string& cert_file,
                                                                           const std::string& key_file,
                                                                           const std::string& client_ca_file) {
  return server(TlsServerFiles{cert_file, key_file, client_ca_file,
                               client_ca_file.empty() ? ClientCertificates::kNone : ClientCertificates::kRequired});
}

std::expected<std::shared_ptr<TlsContext>, std::string> TlsContext::server(const TlsServerFiles& files) {
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_server_method());
  if (ctx == nullptr) return std::unexpected("SSL_CTX_new: " + drain_error_queue());
  std::shared_ptr<TlsContext> owner(new TlsContext(ctx));
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert_file.c_str()) != 1) {
    return std::unexpected(files_error("cert_file", files.cert_file));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return std::unexpected(files_error("key_file", files.key_file));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return std::unexpected(files_error("key_file does not match cert_file", files.key_file));
  }
  // Resumption needs a session id context whenever peers are verified.
  static constexpr std::string_view kSessionContext = "produce-proxy";
  SSL_CTX_set_session_id_context(ctx, reinterpret_cast<const unsigned char*>(kSessionContext.data()),
                                 static_cast<unsigned>(kSessionContext.size()));
  if (files.client_auth == ClientCertificates::kNone) return owner;
  if (files.ca_file.empty()) return std::unexpected(std::string("client certificates need a ca_file"));
  if (SSL_CTX_load_verify_locations(ctx, files.ca_file.c_str(), nullptr) != 1) {
    return std::unexpected(files_error("ca_file", files.ca_file));
  }
  // The CA names sent in CertificateRequest, so a client picks a matching certificate.
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.ca_file.c_str()); names != nullptr) {
    SSL_CTX_set_client_CA_list(ctx, names);
  }
  const int fail_if_none =
      files.client_auth == ClientCertificates::kRequired ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_NONE;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | fail_if_none, nullptr);
  return owner;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, Role role, const std::string& server_name,
                       bool verify_hostname)
    : context_(std::move(context)), ssl_(SSL_new(context_->get())) {
  if (ssl_ == nullptr) return;  // start() reports it
  BIO* bio = session_bio_method() == nullptr ? nullptr : BIO_new(session_bio_method());
  if (bio == nullptr) {
    SSL_free(ssl_);
    ssl_ = nullptr;
    return;
  }
  BIO_set_data(bio, &io_);
  SSL_set_bio(ssl_, bio, bio);  // one BIO both ways: SSL_set_bio takes the one reference
  if (role == Role::kServer) {
    SSL_set_accept_state(ssl_);
    return;
  }
  SSL_set_connect_state(ssl_);
  if (!server_name.empty() && !is_ip_literal(server_name)) SSL_set_tlsext_host_name(ssl_, server_name.c_str());
  // OpenSSL 3 takes an IP literal here too and checks the certificate's IP SANs.
  if (verify_hostname && !server_name.empty()) SSL_set1_host(ssl_, server_name.c_str());
}

TlsSession::~TlsSession() {
  SSL_free(ssl_);  // frees the BIO
}

std::expected<void, TlsFailure> TlsSession::start() {
  if (ssl_ == nullptr) return std::unexpected(TlsFailure{TlsFailureKind::kLocal, "SSL_new failed"});
  auto started = advance_handshake();
  release_buffers();
  return started;
}

std::expected<void, TlsFailure> TlsSession::advance_handshake() {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    handshake_done_ = true;
    return flush_writes();
  }
  const int e = SSL_get_error(ssl_, r);
  // Memory BIOs never refuse a write, so WANT_WRITE only means "drain the
  // output and call again", which take_output() and the next feed() do.
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return {};
  return std::unexpected(failure(e, "handshake"));
}

std::expected<bool, TlsFailure> TlsSession::feed(ByteView ciphertext, const PlaintextSink& sink) {
  if (ssl_ == nullptr) return std::unexpected(TlsFailure{TlsFailureKind::kLocal, "SSL_new failed"});
  io_.borrowed = ciphertext;
  auto read = [&]() -> std::expected<bool, TlsFailure> {
    if (!handshake_done_) {
      if (auto advanced = advance_handshake(); !advanced) return std::unexpected(advanced.error());
      if (!handshake_done_) return false;
    }
    auto closed = read_all(sink);
    if (!closed) return closed;
    // A write that wanted the peer's bytes (a key update) may go on now.
    if (auto flushed = flush_writes(); !flushed) return std::unexpected(flushed.error());
    return closed;
  }();
  keep_unread();
  release_buffers();
  return read;
}

std::expected<TlsSession::Fed, TlsFailure> TlsSession::feed(ByteView ciphertext) {
  // The plaintext is no longer than the ciphertext waiting, so the buffer is
  // sized once per feed in the common case, and grows a record at a time.
  Fed fed;
  std::size_t used = 0;
  const PlaintextSink sink{[&] {
                             if (fed.plaintext.size() - used < kMaxRecordPlaintext) {
                               const std::size_t waiting = io_.kept.size() - io_.kept_offset + io_.borrowed.size();
                               fed.plaintext.resize(used + std::max(waiting, kMaxRecordPlaintext));
                             }
                             return std::span<std::uint8_t>(fed.plaintext).subspan(used);
                           },
                           [&](std::size_t n) {
                             used += n;
                             return true;
                           }};
  auto closed = feed(ciphertext, sink);
  fed.plaintext.resize(used);
  if (!closed) return std::unexpected(closed.error());
  fed.peer_closed = *closed;
  return fed;
}

std::expected<bool, TlsFailure> TlsSession::read_all(const PlaintextSink& sink) {
  // Until OpenSSL wants more bytes: one feed may hold many records (a 1 MiB
  // request is 64 of them), and a record can straddle feeds.
  for (;;) {
    const std::span<std::uint8_t> room = sink.room();
    std::size_t got = 0;
    // SSL_get_error needs an empty queue before the call; peeking is much
    // cheaper than clearing, which walks every slot of the queue.
    if (ERR_peek_error() != 0) ERR_clear_error();
    const int r = SSL_read_ex(ssl_, room.data(), room.size(), &got);
    if (r == 1) {
      if (!sink.took(got)) return false;
      continue;
    }
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return false;
    if (e == SSL_ERROR_ZERO_RETURN) return true;
    return std::unexpected(failure(e, "read"));
  }
}

// The ciphertext feed() was given lives only while it runs: what OpenSSL
// has not read of it yet is copied, to be read first next time.
void TlsSession::keep_unread() {
  if (io_.borrowed.empty()) return;
  if (io_.kept_offset > 0) {
    io_.kept.erase(io_.kept.begin(), io_.kept.begin() + static_cast<std::ptrdiff_t>(io_.kept_offset));
    io_.kept_offset = 0;
  }
  io_.kept.insert(io_.kept.end(), io_.borrowed.begin(), io_.borrowed.end());
  io_.borrowed = {};
}

// OpenSSL's record buffers (about 17 KiB each way) go back once nothing is
// half read or half written in them (SSL_free_buffers refuses otherwise), so
// an idle or stalled connection holds none; they are taken again for the
// next record. Done per feed and per write rather than per record
// (SSL_MODE_RELEASE_BUFFERS), which a busy connection would pay on every
// 16 KiB.
void TlsSession::release_buffers() {
  SSL_free_buffers(ssl_);
}

std::expected<void, TlsFailure> TlsSession::write(Bytes plaintext) {
  if (plaintext.empty()) return {};
  pending_writes_.push_back(std::move(plaintext));
  if (!handshake_done_) return {};
  auto flushed = flush_writes();
  release_buffers();
  return flushed;
}

std::expected<void, TlsFailure> TlsSession::flush_writes() {
  while (!pending_writes_.empty()) {
    const Bytes& front = pending_writes_.front();
    std::size_t written = 0;
    ERR_clear_error();
    const int r = SSL_write_ex(ssl_, front.data() + pending_offset_, front.size() - pending_offset_, &written);
    if (r != 1) {
      const int e = SSL_get_error(ssl_, r);
      // Retried with the same bytes after the next feed().
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return {};
      return std::unexpected(failure(e, "write"));
    }
    pending_offset_ += written;
    if (pending_offset_ == front.size()) {
      pending_writes_.pop_front();
      pending_offset_ = 0;
    }
  }
  return {};
}

Bytes TlsSession::take_output() {
  return std::exchange(io_.output, Bytes());
}

std::size_t TlsSession::queued_plaintext_bytes() const {
  std::size_t n = 0;
  for (const Bytes& b : pending_writes_) n += b.size();
  return n - pending_offset_;
}

void TlsSession::shutdown() {
  if (ssl_ != nullptr && handshake_done_) {
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
  }
}

std::string TlsSession::protocol() const {
  return ssl_ == nullptr ? std::string() : std::string(SSL_get_version(ssl_));
}

std::optional<std::string> TlsSession::peer_common_name() const {
  if (ssl_ == nullptr || SSL_get_verify_result(ssl_) != X509_V_OK) return std::nullopt;
  const X509* cert = SSL_get0_peer_certificate(ssl_);
  if (cert == nullptr) return std::nullopt;
  const X509_NAME* subject = X509_get_subject_name(cert);
  int last = -1;
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    last = i;
  }
  if (last < 0) return std::nullopt;
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, last));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n <= 0) return std::nullopt;
  std::string cn(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  if (cn.find('\0') != std::string::npos) return std::nullopt;
  return cn;
}

bool TlsSession::session_reused() const {
  return ssl_ != nullptr && SSL_session_reused(ssl_) == 1;
}

TlsFailure TlsSession::failure(int ssl_error, std::string_view during) const {
  unsigned long first_error = 0;
  const std::string queued = drain_error_queue(&first_error);
  if (ERR_GET_REASON(first_error) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
    return TlsFailure{TlsFailureKind::kNoPeerCertificate, "the client sent no certificate, and one is required"};
  }
  const long verify = SSL_get_verify_result(ssl_);
  if (!handshake_done_ && verify != X509_V_OK) {
    const auto kind = verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                          ? TlsFailureKind::kHostname
                          : TlsFailureKind::kCertificate;
    return TlsFailure{kind, std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify)};
  }
  std::string reason = std::string("TLS ") + std::string(during) + " failed: ";
  if (!queued.empty()) {
    reason += queued;
  } else if (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_SSL) {
    reason += "unexpected end of the TLS stream";
  } else {
    reason += "SSL error " + std::to_string(ssl_error);
  }
  return TlsFailure{TlsFailureKind::kHandshake, reason};
}

}  // namespace pp::net
