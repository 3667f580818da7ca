#include "proxy/frontend/client_handshakes.h"

#include <utility>
#include <vector>

#include "proxy/frontend/log.h"

namespace pp {

std::string_view client_tls_failure_reason(net::TlsFailureKind kind) {
  switch (kind) {
    case net::TlsFailureKind::kCertificate:
    case net::TlsFailureKind::kHostname:
      return "certificate";
    case net::TlsFailureKind::kNoPeerCertificate:
      return "no_certificate";
    case net::TlsFailureKind::kNotTls:
      return "not_tls";
    case net::TlsFailureKind::kLocal:
      return "local";
    case net::TlsFailureKind::kHandshake:
      return "handshake";
  }
  return "handshake";
}

ClientHandshakes::ClientHandshakes(uv_loop_t* loop, MemoryBudget& budget, FrontendCounters& counters,
                                   FrontendObserver& observer, Owner& owner)
    : budget_(budget), counters_(counters), observer_(observer), owner_(owner), pacer_(loop) {}

ClientHandshakes::~ClientHandshakes() {
  close_all();
}

void ClientHandshakes::set_context(std::shared_ptr<net::TlsContext> context, bool require_principal) {
  context_ = std::move(context);
  require_principal_ = require_principal;
}

bool ClientHandshakes::start(std::uint64_t id, net::TcpConnection tcp, std::uint64_t now_ms) {
  const std::size_t share = budget_.limit() / kBudgetShareDivisor;
  if (budget_.room() < kHandshakeChargeBytes || (pending_.size() + 1) * kHandshakeChargeBytes > share) {
    ++counters_.connections_refused_total;
    if (const auto held_back = refusal_log_.admit(now_ms)) {
      frontend::log().warn(
          "refusing client {}: no room in the memory budget for a TLS handshake ({} bytes; {} handshakes under "
          "way) ({} more refused since the last line)",
          tcp.peer_name(), kHandshakeChargeBytes, pending_.size(), *held_back);
    }
    tcp.close();
    return false;
  }
  Pending pending;
  pending.peer = tcp.peer_name();
  pending.started_ms = now_ms;
  pending.charge = budget_.charge(MemoryUse::kTlsHandshakes, kHandshakeChargeBytes);
  pending.connection = net::AcceptedConnection::tls(
      std::move(tcp), context_, pacer_,
      [this, id](const std::optional<net::TlsFailure>& failure) { finished(id, failure); });
  pending_.emplace(id, std::move(pending));
  return true;
}

void ClientHandshakes::finished(std::uint64_t id, const std::optional<net::TlsFailure>& failure) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending& pending = it->second;
  if (failure) {
    if (pending.connection.peer_sent_nothing() && failure->kind == net::TlsFailureKind::kHandshake) {
      // A port probe (a TCP health check): not a client that failed.
      frontend::log().debug("client {} closed before its TLS handshake began", pending.peer);
      pending_.erase(it);
      owner_.handshake_failed(id);
      return;
    }
    fail(id, pending, client_tls_failure_reason(failure->kind), failure->reason);
    return;
  }
  std::string why;
  std::optional<Principal> principal = principal_of(pending.connection, why);
  if (!principal) {
    fail(id, pending, "certificate", why);
    return;
  }
  net::AcceptedConnection connection = std::move(pending.connection);
  frontend::log().debug("client {}: {} established{}, as {}", pending.peer, connection.protocol(),
                        connection.session_reused() ? " (resumed)" : "", principal->describe());
  pending_.erase(it);
  owner_.handshake_done(id, std::move(connection), std::move(*principal));
}

std::optional<Principal> ClientHandshakes::principal_of(const net::AcceptedConnection& connection,
                                                        std::string& why) const {
  std::optional<std::string> cn = connection.peer_common_name();
  if (cn) return Principal::tls_certificate(std::move(*cn));
  if (!require_principal_) return Principal::anonymous();
  why = "the client certificate has no subject CN to name its principal";
  return std::nullopt;
}

void ClientHandshakes::fail(std::uint64_t id, Pending& pending, std::string_view reason, const std::string& why) {
  ++counters_.client_tls_failures_total;
  observer_.on_client_tls_failure(reason);
  frontend::log().warn("closing client {}: TLS handshake failed ({}): {}", pending.peer, reason, why);
  pending.connection.close();
  pending_.erase(id);
  owner_.handshake_failed(id);
}

void ClientHandshakes::sweep(std::uint64_t now_ms) {
  std::vector<std::uint64_t> overdue;
  for (const auto& [id, pending] : pending_) {
    if (now_ms - pending.started_ms >= timeout_ms_) overdue.push_back(id);
  }
  for (const std::uint64_t id : overdue) {
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    fail(id, it->second, "timeout", "not done within " + std::to_string(timeout_ms_) + " ms");
  }
}

void ClientHandshakes::close_all() {
  for (auto& [id, pending] : pending_) pending.connection.close();
  pending_.clear();
}

void ClientHandshakes::tls_on_plaintext_listener(const std::string& peer) {
  ++counters_.client_tls_failures_total;
  observer_.on_client_tls_failure("plaintext_listener");
  frontend::log().warn("closing client {}: it began a TLS handshake, but this listener is plaintext", peer);
}

}  // namespace pp
