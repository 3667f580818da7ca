// The daemon's wiring on one libuv loop (docs/design/ARCHITECTURE.md): the metrics server,
// the upstream (a real cluster, or librdkafka's mock cluster in-process for
// bootstrap_servers = ["embedded"]), the idempotent producer, the legacy-client
// front end, and the lifecycle: start in the documented order, report ready,
// drain on request, reload what can change live.
#pragma once

#include <uv.h>

#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/settings.h"
#include "daemon/mock_cluster.h"
#include "daemon/producer_driver.h"
#include "daemon/systemd_notify.h"
#include "metrics/health.h"
#include "metrics/metrics.h"
#include "metrics/metrics_server.h"
#include "proxy/durable/cluster_view_keeper.h"
#include "proxy/durable/spool_feeder.h"
#include "proxy/durable/spool_journal.h"
#include "proxy/durable/spooling_sink.h"
#include "proxy/frontend/frontend.h"
#include "proxy/spool/spool_writer.h"

namespace pp {

class ProxyRuntime {
 public:
  ProxyRuntime(uv_loop_t* loop, config::Settings settings);
  ~ProxyRuntime();
  ProxyRuntime(const ProxyRuntime&) = delete;
  ProxyRuntime& operator=(const ProxyRuntime&) = delete;

  // Start-up in docs/design/INTERFACES.md's order: metrics listener, upstream, producer
  // id, then the client listener; `on_ready` runs once all of that holds
  // (sd_notify READY=1 and /readyz 200 are sent by the runtime itself).
  // Errors are start-up failures (a port in use, a bad address).
  // `on_failed(exit_code)` runs if start-up fails after start() returned (the
  // client listener cannot bind once the upstream is ready).
  std::expected<void, std::string> start(std::function<void()> on_ready = nullptr,
                                         std::function<void(int)> on_failed = nullptr);

  // SIGTERM/SIGINT: stop taking requests, let what is buffered drain upstream
  // for up to shutdown.drain_timeout_ms, then `done(exit_code)`: 0 when every
  // accepted record was delivered, 1 when some were lost to the deadline.
  void drain(std::function<void(int exit_code)> done);
  bool draining() const { return draining_; }

  // SIGHUP with freshly loaded settings: live keys apply now, the rest are
  // logged as needing a restart.
  void reload(const config::Settings& reloaded);

  // Spool mode: keeps the cluster view in `writer`'s spool (every change of
  // the known topics appended) and restores the last one, so that with a
  // topic in ack = "spool" the client listener opens without waiting for the
  // upstream and Metadata is answered from that view until it answers.
  // Readiness then means "accepting": ready while the spool is below
  // spool.max_bytes and its last write did not fail, whether or not the
  // upstream is reachable. Call after start(), before the loop runs;
  // `writer` must outlive this runtime's loop.
  void keep_cluster_view(spool::SpoolWriter& writer);

  // ---- for tests and the log line at start ----
  std::uint16_t client_port() const;
  std::uint16_t metrics_port() const;
  std::string upstream_bootstrap() const { return bootstrap_; }
  bool ready() const { return ready_; }
  ProducerDriver& driver() { return *driver_; }
  Metrics& metrics() { return *metrics_; }

 private:
  void check_ready();
  bool accepts_before_upstream() const;
  void update_spool_readiness();
  void bound_freed_memory();
  void exit_if_fatal();
  void sample_metrics();
  void reload_tls();
  std::expected<void, std::string> load_listener_tls(bool reloading);
  void reload_sasl();
  void finish_drain(bool deadline);
  void report_drained();
  // [spool]: recovery (a refused directory fails start-up) and the writer.
  std::expected<void, std::string> open_spool();
  // The journal, replay, the feeder and the sink in front of the producer.
  void wire_spool();
  // What the front end submits to: the spooling sink, or the producer.
  RecordSink& client_sink();
  bool drained() const;
  std::expected<void, std::string> configure_sasl(upstream::UpstreamConfig& upstream);
  std::expected<void, std::string> load_client_users();
  // The front end, its idempotent clients' state restored from the spool and
  // snapshotted into it from then on (daemon/client_state_restore.h).
  std::expected<void, std::string> create_frontend();

  uv_loop_t* loop_;
  config::Settings settings_;
  std::string bootstrap_;
  SystemdNotifier systemd_;
  std::string systemd_status_;  // the last STATUS= sent
  Health health_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::unique_ptr<MockCluster> embedded_;
  std::shared_ptr<upstream::sasl::Authenticator> sasl_;  // null: no upstream SASL
  std::unique_ptr<ProducerDriver> driver_;
  std::unique_ptr<Frontend> frontend_;
  spool::SpoolWriter* spool_ = nullptr;  // spool mode: the writer keep_cluster_view() was given
  std::unique_ptr<durable::ClusterViewKeeper> cluster_view_;
  // [spool] (docs/design/SPOOL.md): null while spool.dir is empty.
  std::unique_ptr<spool::SpoolWriter> spool_writer_;
  std::unique_ptr<durable::SpoolJournal> journal_;
  std::unique_ptr<durable::SpoolFeeder> feeder_;
  std::unique_ptr<durable::SpoolingSink> spooling_sink_;
  std::optional<int> drained_exit_code_;  // known, waiting for the spool to close
  bool spool_closed_ = false;
  net::Timer heartbeat_;
  net::Timer freed_memory_;  // return_freed_memory_over(), every 10 s
  net::Timer readiness_;
  net::Timer watchdog_;
  net::Timer drain_timer_;
  std::function<void()> on_ready_;
  std::function<void(int)> on_failed_;
  std::function<void(int)> on_drained_;
  std::int64_t drain_deadline_ms_ = 0;
  bool ready_ = false;
  bool draining_ = false;
};

}  // namespace pp
