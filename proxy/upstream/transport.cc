#include "proxy/upstream/transport.h"

#include <uv.h>

#include <utility>

namespace pp::upstream {

std::expected<void, TransportClosed> Transport::start(net::TcpConnection tcp, const TransportSecurity& security,
                                                      const std::string& host, Callbacks callbacks) {
  ++epoch_;
  tcp_ = std::move(tcp);
  callbacks_ = std::move(callbacks);
  established_ = security.tls == nullptr;
  answered_ = false;
  session_.reset();
  auto on_close = [this](int status) {
    const std::string_view auth = authenticated() ? "" : net::metric_reason(net::TlsFailureKind::kHandshake);
    const std::string when = established_ ? "" : " during the TLS handshake";
    const std::string unanswered = established_ && !authenticated() ? " before answering over TLS" : "";
    fail(status == 0 ? "closed by the broker" + when + unanswered
                     : "socket error" + when + unanswered + ": " + uv_strerror(status),
         auth);
  };
  if (security.tls == nullptr) {
    tcp_.set_callbacks([this](ByteView data) { callbacks_.on_data(data); }, on_close);
    tcp_.start_reading();
    return {};
  }
  const std::string& name = security.server_name.empty() ? host : security.server_name;
  session_ =
      std::make_unique<net::TlsSession>(security.tls, net::TlsSession::Role::kClient, name, security.verify_hostname);
  tcp_.set_callbacks([this](ByteView data) { on_ciphertext(data); }, on_close);
  tcp_.start_reading();
  if (auto started = session_->start(); !started) {
    close();
    return std::unexpected(
        TransportClosed{"TLS setup failed: " + started.error().reason, net::metric_reason(started.error().kind)});
  }
  flush_output();
  return {};
}

void Transport::write(Bytes frame) {
  if (session_ == nullptr) {
    tcp_.write(std::move(frame));
    return;
  }
  if (auto written = session_->write(std::move(frame)); !written) {
    fail_tls(written.error());
    return;
  }
  flush_output();
}

void Transport::write(WireFrame frame) {
  if (session_ == nullptr) {
    tcp_.write(std::move(frame));
    return;
  }
  write(frame.flatten());
}

void Transport::on_ciphertext(ByteView data) {
  auto fed = session_->feed(data);
  // The alert, Finished or ticket OpenSSL wrote goes out before anything else.
  flush_output();
  if (!fed) {
    fail_tls(fed.error());
    return;
  }
  const std::uint64_t epoch = epoch_;
  if (!established_ && session_->handshake_done()) {
    established_ = true;
    callbacks_.on_established();
    if (epoch != epoch_) return;  // closed from inside the callback
  }
  if (!fed->plaintext.empty()) {
    answered_ = true;
    callbacks_.on_data(fed->plaintext);
    if (epoch != epoch_) return;
  }
  if (fed->peer_closed) fail("the broker closed the TLS session (close_notify)", "");
}

void Transport::flush_output() {
  if (session_ == nullptr) return;
  Bytes out = session_->take_output();
  if (!out.empty()) tcp_.write(std::move(out));
}

void Transport::close() {
  ++epoch_;
  tcp_.close();
  session_.reset();
  established_ = false;
}

void Transport::fail(std::string reason, std::string_view auth_failure) {
  auto on_closed = callbacks_.on_closed;
  close();
  if (on_closed) on_closed(TransportClosed{std::move(reason), auth_failure});
}

void Transport::fail_tls(const net::TlsFailure& failure) {
  const char* what = !established_      ? "TLS handshake failed: "
                     : !authenticated() ? "TLS failed before the broker's first answer (refused after the handshake): "
                                        : "TLS failed: ";
  fail(what + failure.reason, authenticated() ? std::string_view() : net::metric_reason(failure.kind));
}

std::string Transport::describe() const {
  if (session_ == nullptr) return "plaintext";
  return session_->protocol();
}

}  // namespace pp::upstream
