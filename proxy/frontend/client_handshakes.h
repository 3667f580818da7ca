// Client connections between accept and the end of their TLS handshake, on
// a TLS listener ([listener.tls]). Each is charged kHandshakeChargeBytes to
// the memory budget until it ends, and closed when its handshake is not done
// within the handshake timeout (checked by the front end's sweep). The
// handshakes together hold at most half of the budget: a new one past that
// (or one the budget has no room for) is refused, so that connections still
// handshaking (unauthenticated, possibly stalled on purpose) can never fill
// the budget and pause the clients already served. Refusals are logged at
// most once a second, with a count of those held back. A handshake that completes is
// handed to the owner with the client's principal; one that fails is closed,
// logged once with the peer and the reason, and counted by reason
// (FrontendObserver::on_client_tls_failure). Nothing here touches another
// connection.
//
// The listener's handshakes take their signing steps from one
// net::HandshakePacer, owned here: made and gone with this, so two listeners
// (or two front ends on one loop) never share or inherit a ration.
//
// The principal of a verified client certificate is its subject CN (the last
// CN when there are several; no SAN is consulted). A verified certificate
// without a usable CN fails the handshake when client certificates are
// required, and leaves the client anonymous when they are only requested.
//
// Loop thread only. The owner must outlive this.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proxy/base/log_limiter.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/frontend/principal.h"
#include "proxy/net/accepted_connection.h"
#include "proxy/net/handshake_pacer.h"
#include "proxy/net/tls_session.h"
#include "proxy/pipeline/memory_uses.h"

namespace pp {

// The label a client TLS failure is counted under
// (client_tls_handshake_failures_total{reason}).
std::string_view client_tls_failure_reason(net::TlsFailureKind kind);

class ClientHandshakes {
 public:
  // What a handshaking connection is charged: OpenSSL's session with its
  // record buffers while the handshake runs, rounded up.
  static constexpr std::size_t kHandshakeChargeBytes = 64 * 1024;
  // The handshakes' share of the budget: at most its limit over this.
  static constexpr std::size_t kBudgetShareDivisor = 2;

  // Told the outcome of each handshake start() took, never inside start().
  class Owner {
   public:
    // Done: `connection` is the owner's now, its principal established.
    virtual void handshake_done(std::uint64_t id, net::AcceptedConnection connection, Principal principal) = 0;
    // Failed or timed out (already logged, counted and closed).
    virtual void handshake_failed(std::uint64_t id) = 0;

   protected:
    ~Owner() = default;
  };

  // `budget`, `counters`, `observer` and `owner` must outlive this; the
  // handshakes run on `loop`.
  ClientHandshakes(uv_loop_t* loop, MemoryBudget& budget, FrontendCounters& counters, FrontendObserver& observer,
                   Owner& owner);
  ~ClientHandshakes();
  ClientHandshakes(const ClientHandshakes&) = delete;
  ClientHandshakes& operator=(const ClientHandshakes&) = delete;

  // The server context new connections handshake with (start-up, SIGHUP);
  // handshakes under way keep theirs. `require_principal`: client
  // certificates are required, so one without a CN is refused.
  void set_context(std::shared_ptr<net::TlsContext> context, bool require_principal);
  bool enabled() const { return context_ != nullptr; }
  void set_timeout_ms(std::uint64_t ms) { timeout_ms_ = ms; }

  // Starts `tcp`'s handshake as connection `id`, at loop time `now_ms`.
  // False when the budget has no room for it: the connection is closed and
  // logged, and the owner hears nothing of it.
  bool start(std::uint64_t id, net::TcpConnection tcp, std::uint64_t now_ms);
  // Closes the handshakes older than the timeout (owner told of each).
  void sweep(std::uint64_t now_ms);
  // Closes every handshake without telling the owner (front end stopping).
  void close_all();
  std::size_t size() const { return pending_.size(); }

  // A plaintext listener's client began a TLS handshake: logged and counted
  // (reason plaintext_listener). The connection closes itself.
  void tls_on_plaintext_listener(const std::string& peer);

 private:
  struct Pending {
    net::AcceptedConnection connection;
    std::string peer;
    std::uint64_t started_ms = 0;
    MemoryCharge charge;
  };
  void finished(std::uint64_t id, const std::optional<net::TlsFailure>& failure);
  void fail(std::uint64_t id, Pending& pending, std::string_view reason, const std::string& why);
  std::optional<Principal> principal_of(const net::AcceptedConnection& connection, std::string& why) const;

  MemoryBudget& budget_;
  FrontendCounters& counters_;
  FrontendObserver& observer_;
  Owner& owner_;
  std::shared_ptr<net::TlsContext> context_;
  bool require_principal_ = false;
  std::uint64_t timeout_ms_ = 10000;
  // Before pending_: the handshakes under way hold its address, and are
  // closed (close_all) before it goes.
  net::HandshakePacer pacer_;
  std::unordered_map<std::uint64_t, Pending> pending_;
  LogLimiter refusal_log_{std::chrono::seconds(1)};
};

}  // namespace pp
