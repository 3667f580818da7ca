// The metrics listener (docs/design/INTERFACES.md "HTTP endpoints"): /metrics, /healthz
// and /readyz on one address, served by prometheus-cpp's Exposer and the
// civetweb server it embeds. No HTTP code of ours: /metrics is the Exposer's
// own endpoint, and the two health paths are civetweb request handlers added
// to the same civetweb context.
//
// Requests run on civetweb's worker threads; they read only Health's atomics
// and the registry (prometheus-cpp's own locking), never proxy state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "metrics/health.h"
#include "metrics/metrics.h"

struct mg_context;
struct mg_connection;

namespace prometheus {
class Exposer;
}

namespace pp {

class MetricsServer {
 public:
  // Listens on `address` ("127.0.0.1:9464"; port 0 picks a free one) before
  // returning. Throws std::runtime_error when it cannot (start-up only,
  // "Peer-caused errors are values", docs/design/ARCHITECTURE.md). `metrics`
  // may go first (the exposer holds a weak reference); `health` must outlive
  // the server.
  MetricsServer(const std::string& address, const Metrics& metrics, const Health& health);
  // Stops the listener and joins civetweb's threads.
  ~MetricsServer();

  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port actually bound.
  std::uint16_t port() const { return port_; }

 private:
  static int on_healthz(mg_connection* conn, void* self);
  static int on_readyz(mg_connection* conn, void* self);

  const Health& health_;
  // Whether 127.0.0.1:port_ reaches our listener (a loopback or wildcard
  // address), so the destructor may knock there to hurry civetweb's stop.
  bool knock_on_stop_ = false;
  mg_context* context_ = nullptr;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::uint16_t port_ = 0;
};

}  // namespace pp
