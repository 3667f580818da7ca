#include "proxy/net/tls_session.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <utility>

namespace pp::net {

namespace {

// One TLS record carries at most 16 KiB of plaintext: room for one whole
// record, so SSL_read never stops inside one for want of space.
constexpr std::size_t kMinReadRoom = 16 * 1024;

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
  // An idle connection gives its read and write buffers back.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
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
  SSL_set_bio(ssl_, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
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
  SSL_free(ssl_);  // frees both BIOs
}

std::expected<void, TlsFailure> TlsSession::start() {
  if (ssl_ == nullptr) return std::unexpected(TlsFailure{TlsFailureKind::kLocal, "SSL_new failed"});
  return advance_handshake();
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

std::expected<TlsSession::Fed, TlsFailure> TlsSession::feed(ByteView ciphertext) {
  Fed fed;
  if (ssl_ == nullptr) return std::unexpected(TlsFailure{TlsFailureKind::kLocal, "SSL_new failed"});
  if (!ciphertext.empty()) {
    BIO_write(SSL_get_rbio(ssl_), ciphertext.data(), static_cast<int>(ciphertext.size()));
  }
  if (!handshake_done_) {
    if (auto advanced = advance_handshake(); !advanced) return std::unexpected(advanced.error());
    if (!handshake_done_) return fed;
  }
  if (auto read = read_all(fed); !read) return std::unexpected(read.error());
  // A write that wanted the peer's bytes (a key update) may go on now.
  if (auto flushed = flush_writes(); !flushed) return std::unexpected(flushed.error());
  return fed;
}

std::expected<void, TlsFailure> TlsSession::read_all(Fed& fed) {
  // Loop until OpenSSL wants more bytes: one feed may hold many records
  // (a 1 MiB response is 64 of them), and a record can straddle feeds. The
  // plaintext is no longer than the ciphertext waiting, so the buffer is
  // sized (and zero-filled) once per feed in the common case.
  std::size_t used = fed.plaintext.size();
  auto ensure_room = [&] {
    if (fed.plaintext.size() - used >= kMinReadRoom) return;
    const std::size_t waiting = BIO_ctrl_pending(SSL_get_rbio(ssl_)) + static_cast<std::size_t>(SSL_pending(ssl_));
    fed.plaintext.resize(used + std::max(waiting, kMinReadRoom));
  };
  for (;;) {
    ensure_room();
    std::size_t got = 0;
    ERR_clear_error();
    const int r = SSL_read_ex(ssl_, fed.plaintext.data() + used, fed.plaintext.size() - used, &got);
    used += got;
    if (r == 1) continue;
    fed.plaintext.resize(used);
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return {};
    if (e == SSL_ERROR_ZERO_RETURN) {
      fed.peer_closed = true;
      return {};
    }
    return std::unexpected(failure(e, "read"));
  }
}

std::expected<void, TlsFailure> TlsSession::write(Bytes plaintext) {
  if (plaintext.empty()) return {};
  pending_writes_.push_back(std::move(plaintext));
  if (!handshake_done_) return {};
  return flush_writes();
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
  Bytes out;
  if (ssl_ == nullptr) return out;
  BIO* wbio = SSL_get_wbio(ssl_);
  const std::size_t pending = BIO_ctrl_pending(wbio);
  if (pending == 0) return out;
  out.resize(pending);
  const int got = BIO_read(wbio, out.data(), static_cast<int>(pending));
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
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
