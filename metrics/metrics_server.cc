#include "metrics/metrics_server.h"

#include <CivetServer.h>
#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace pp {

namespace {

// docs/design/INTERFACES.md, "HTTP endpoints": the promise to operators.
constexpr const char* kHttpWorkers = "16";
constexpr const char* kHttpRequestTimeoutMs = "1000";

// prometheus-cpp's Exposer keeps its CivetServer private, but passes our
// CivetCallbacks to it, and civetweb calls init_context with the new context
// on the constructing thread before mg_start returns. This is the one place a
// capture-less C callback can hand the context back to the constructor.
thread_local mg_context* t_started_context = nullptr;

void remember_context(const mg_context* ctx) {
  // mg_set_request_handler wants a mutable context; it is ours to configure.
  t_started_context = const_cast<mg_context*>(ctx);
}

bool is_method(const mg_request_info* request, const char* method) {
  return request && request->request_method && std::strcmp(request->request_method, method) == 0;
}

// prometheus-cpp's /metrics handler answers GET only (404 for HEAD); a HEAD
// gets the headers of a scrape, without serialising the registry for it.
int answer_head_of_metrics(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (!is_method(request, "HEAD") || !request->local_uri || std::strcmp(request->local_uri, "/metrics") != 0) {
    return 0;  // civetweb and prometheus-cpp take it from here
  }
  mg_response_header_start(conn, 200);
  mg_response_header_add(conn, "Content-Type", "text/plain; version=0.0.4; charset=utf-8", -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  mg_response_header_send(conn);
  return 200;
}

int respond(mg_connection* conn, int status, std::string_view body) {
  const mg_request_info* request = mg_get_request_info(conn);
  const bool head = is_method(request, "HEAD");
  const bool get = is_method(request, "GET");
  if (!get && !head) {
    status = 405;
    body = "method not allowed\n";
  }
  const std::string length = std::to_string(body.size());
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", "text/plain; charset=utf-8", -1);
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  // Probes must see the state now, not a cached answer.
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  if (status == 405) mg_response_header_add(conn, "Allow", "GET, HEAD", -1);
  mg_response_header_send(conn);
  if (!head) mg_write(conn, body.data(), body.size());
  return status;
}

// "127.0.0.1:9464", "0.0.0.0:9464", "9464", "localhost:9464": addresses at
// which a connection to 127.0.0.1 reaches our own listener.
bool loopback_reaches(std::string_view address) {
  const auto colon = address.rfind(':');
  const std::string_view host = colon == std::string_view::npos ? std::string_view() : address.substr(0, colon);
  return host.empty() || host == "0.0.0.0" || host == "localhost" || host.starts_with("127.");
}

// One connect and close to our own listener; best effort.
void knock(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  close(fd);
}

}  // namespace

MetricsServer::MetricsServer(const std::string& address, const Metrics& metrics, const Health& health)
    : health_(health), knock_on_stop_(loopback_reaches(address)) {
  CivetCallbacks callbacks;
  callbacks.init_context = remember_context;
  callbacks.begin_request = answer_head_of_metrics;
  t_started_context = nullptr;
  const std::vector<std::string> options{"listening_ports", address,
                                         // civetweb serves one connection per worker, start to end, so a
                                         // connection that stalls mid-request holds its worker. With 16, up to
                                         // 15 stalled or slow peers still leave a worker for a probe; each such
                                         // peer is dropped when the request timeout runs out. Idle workers cost
                                         // only their (virtual) stacks.
                                         "num_threads", kHttpWorkers,
                                         // A request must arrive whole within this, however slowly it trickles
                                         // in. Shorter than the chart's 2 s probe timeout: past 15 stalled
                                         // peers a probe waits for a worker, and no longer than this per 16
                                         // of them.
                                         "request_timeout_ms", kHttpRequestTimeoutMs};
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(options, &callbacks);
  } catch (const std::exception& e) {
    t_started_context = nullptr;
    throw std::runtime_error("metrics.address " + address + ": cannot listen: " + e.what());
  }
  context_ = t_started_context;
  t_started_context = nullptr;
  if (!context_) throw std::runtime_error("metrics server: civetweb did not report its context");

  exposer_->RegisterCollectable(metrics.registry());
  mg_set_request_handler(context_, "/healthz", &MetricsServer::on_healthz, this);
  mg_set_request_handler(context_, "/readyz", &MetricsServer::on_readyz, this);

  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (!ports.empty()) port_ = static_cast<std::uint16_t>(ports.front());
}

MetricsServer::~MetricsServer() {
  // Stopping joins civetweb's threads before health_ (and this) can go away.
  // Its master thread polls the listener in 2 s quanta and reads the stop
  // flag only between polls, so a plain stop takes up to 2 s; a connection
  // wakes the poll, so knocking while the stop runs ends it in milliseconds.
  // Only where 127.0.0.1 is surely our listener; elsewhere the stop just
  // takes its 2 s.
  if (!knock_on_stop_ || port_ == 0) {
    exposer_.reset();
    return;
  }
  std::atomic<bool> stopped{false};
  std::thread stopper;
  try {
    stopper = std::thread([&] {
      exposer_.reset();
      stopped.store(true);
    });
  } catch (const std::system_error&) {
    exposer_.reset();  // no thread to spare: the slow way
    return;
  }
  while (!stopped.load()) {
    knock(port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stopper.join();
}

int MetricsServer::on_healthz(mg_connection* conn, void* self) {
  const Health& health = static_cast<MetricsServer*>(self)->health_;
  if (health.live()) return respond(conn, 200, "ok\n");
  const std::string body =
      "event loop stalled: last heartbeat " + std::to_string(health.since_last_beat().count()) + " ms ago\n";
  return respond(conn, 503, body);
}

int MetricsServer::on_readyz(mg_connection* conn, void* self) {
  const Health& health = static_cast<MetricsServer*>(self)->health_;
  if (health.ready()) return respond(conn, 200, "ready\n");
  if (health.draining()) return respond(conn, 503, "draining\n");
  switch (health.not_ready_reason()) {
    case NotReady::kSpoolFull:
      return respond(conn, 503, "not ready: the spool is full (spool.max_bytes)\n");
    case NotReady::kSpoolFailing:
      return respond(conn, 503, "not ready: writes to the spool fail\n");
    case NotReady::kStarting:
      break;
  }
  return respond(conn, 503, "not ready\n");
}

}  // namespace pp
