#include "daemon/proxy_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "config/client_access.h"
#include "config/spool_checks.h"
#include "daemon/allocator_tuning.h"
#include "daemon/client_state_restore.h"
#include "daemon/settings_mapping.h"
#include "proxy/durable/spool_replay.h"
#include "proxy/sasl/users_file.h"
#include "proxy/spool/spool_recovery.h"

namespace pp {

namespace {

constexpr std::uint64_t kHeartbeatMs = 200;  // /healthz: the loop answers
constexpr std::uint64_t kFreedMemoryCheckMs = 10000;
constexpr std::size_t kMinimumRetainedFreedBytes = std::size_t{32} << 20;
constexpr std::uint64_t kReadinessPollMs = 50;
constexpr std::uint64_t kDrainPollMs = 20;

// Validation lets a listener beyond loopback without client authentication
// through only with listener.allow_unauthenticated; said once at start, so
// the operator sees the relay they opened in the logs.
void warn_if_open_beyond_loopback(const config::ListenerSettings& listener) {
  if (!config::serves_unauthenticated_beyond_loopback(listener)) return;
  spdlog::warn(
      "listener: {} is not loopback and clients are not authenticated (listener.allow_unauthenticated = true): "
      "anyone who reaches this port produces to the upstream cluster under the proxy's identity; only a "
      "firewall or network policy keeps it from being an open relay",
      listener.address);
}

// Recovery's repairs, each named with its file (SPOOL.md, "Recovery"): a
// torn tail cut off, a corrupt segment moved aside; the entries after the
// damage are not delivered.
void log_spool_damage(const spool::RecoveryReport& report) {
  for (const spool::CorruptRange& damage : report.damage) {
    spdlog::warn("spool: {} is damaged at byte {} ({}); its {} bytes from there are not delivered", damage.path,
                 damage.offset, damage.reason, damage.bytes);
  }
  for (const std::string& path : report.moved_aside) {
    spdlog::warn("spool: moved the corrupt segment aside as {}; its entries before the damage are still delivered",
                 path);
  }
}

}  // namespace

ProxyRuntime::ProxyRuntime(uv_loop_t* loop, config::Settings settings)
    : loop_(loop),
      settings_(std::move(settings)),
      heartbeat_(loop),
      freed_memory_(loop),
      readiness_(loop),
      watchdog_(loop),
      drain_timer_(loop) {}

ProxyRuntime::~ProxyRuntime() {
  if (spool_writer_) spool_writer_->set_client_producers_source(nullptr);  // the front end's state goes first
  frontend_.reset();
  if (driver_ && journal_) driver_->producer().set_journal(nullptr);
  if (driver_) driver_->close();
}

std::expected<void, std::string> ProxyRuntime::start(std::function<void()> on_ready,
                                                     std::function<void(int)> on_failed) {
  on_ready_ = std::move(on_ready);
  on_failed_ = std::move(on_failed);
  warn_if_open_beyond_loopback(settings_.listener);
  metrics_ = std::make_unique<Metrics>(to_metrics_config(settings_));
  try {
    metrics_server_ = std::make_unique<MetricsServer>(settings_.metrics.address, *metrics_, health_);
  } catch (const std::exception& e) {
    return std::unexpected(std::string("metrics listener: ") + e.what());
  }
  if (auto spool = open_spool(); !spool) return spool;
  bound_freed_memory();
  heartbeat_.start(0, kHeartbeatMs, [this] {
    health_.beat();
    update_spool_readiness();
    sample_metrics();
    exit_if_fatal();
  });

  upstream::UpstreamConfig upstream = to_upstream_config(settings_);
  upstream.observer = &metrics_->upstream_observer();
  auto security = to_transport_security(settings_);
  if (!security) return std::unexpected(security.error());
  upstream.security = std::move(*security);
  if (settings_.upstream.embedded() && upstream.security.tls) {
    spdlog::warn("upstream: the embedded mock cluster speaks plaintext only; [upstream.tls] is ignored");
    upstream.security = {};
  }
  if (upstream.security.tls) spdlog::info("upstream: TLS to every broker (TLS 1.2 minimum, certificate verified)");
  if (settings_.upstream.embedded()) {
    // Demo mode: records live in this process's memory only.
    embedded_ = std::make_unique<MockCluster>(3);
    upstream.bootstrap_servers = embedded_->bootstrap_list();
    spdlog::warn(
        "upstream: EMBEDDED mock cluster (librdkafka) at {} -- a demo: records stay in this "
        "process's memory and are lost when it exits",
        embedded_->bootstraps());
  }
  if (auto sasl = configure_sasl(upstream); !sasl) return sasl;
  for (const auto& b : upstream.bootstrap_servers) bootstrap_ += (bootstrap_.empty() ? "" : ",") + b;
  driver_ = std::make_unique<ProducerDriver>(loop_, upstream, to_pipeline_config(settings_),
                                             &metrics_->pipeline_observer(), to_topic_limits(settings_));
  wire_spool();
  if (auto started = driver_->start(); !started) return std::unexpected("upstream: " + started.error());
  if (spool_writer_) keep_cluster_view(*spool_writer_);

  if (auto created = create_frontend(); !created) return created;
  if (auto users = load_client_users(); !users) return users;
  if (auto tls = load_listener_tls(false); !tls) return tls;
  if (systemd_.watchdog_period()) {
    const auto period = static_cast<std::uint64_t>(systemd_.watchdog_period()->count());
    watchdog_.start(period, period, [this] {
      if (health_.live()) systemd_.watchdog();
    });
  }
  readiness_.start(0, kReadinessPollMs, [this] { check_ready(); });
  return {};
}

// Freed pages kept for reuse stay within max(budget, 32 MiB) (ARCHITECTURE.md).
void ProxyRuntime::bound_freed_memory() {
  const std::size_t retained =
      std::max(static_cast<std::size_t>(settings_.producer.buffer_memory_bytes), kMinimumRetainedFreedBytes);
  freed_memory_.start(kFreedMemoryCheckMs, kFreedMemoryCheckMs, [retained] {
    if (const std::size_t returned = return_freed_memory_over(retained); returned > 0) {
      spdlog::debug("allocator: returned {} bytes of freed memory to the kernel", returned);
    }
  });
}

// Before the loop runs: the spool's first commit after a start writes a
// snapshot of the restored state.
std::expected<void, std::string> ProxyRuntime::create_frontend() {
  auto frontend_config = to_frontend_config(settings_);
  if (!frontend_config) return std::unexpected(frontend_config.error());
  frontend_ = std::make_unique<Frontend>(loop_, *frontend_config, client_sink(), driver_->followed_topics(),
                                         &metrics_->frontend_observer());
  if (spool_writer_) {
    keep_client_state(*spool_writer_, frontend_->client_producers(), uv_now(loop_));
  }
  return {};
}

// Reads the password (or checks the token source) now, so a missing secret
// fails start-up with the key's name instead of every connection later.
std::expected<void, std::string> ProxyRuntime::configure_sasl(upstream::UpstreamConfig& upstream) {
  if (settings_.upstream.sasl.mechanism.empty()) return {};
  auto authenticator = upstream::sasl::Authenticator::create(to_sasl_config(settings_));
  if (!authenticator) return std::unexpected("upstream.sasl: " + authenticator.error());
  sasl_ = *authenticator;
  upstream.sasl = sasl_;
  Metrics* metrics = metrics_.get();
  upstream.on_reauthenticated = [metrics](std::int32_t node) { metrics->on_upstream_reauthentication(node); };
  spdlog::info("upstream: SASL {} as {}", sasl_->mechanism(),
               settings_.upstream.sasl.username.empty() ? std::string("(token)") : settings_.upstream.sasl.username);
  return {};
}

// [listener.sasl]: the users file, read at start (a missing or malformed
// one fails start-up, naming the key) and on every SIGHUP (a file that
// fails then keeps the users loaded before). New logins check the new
// users; sessions up, and exchanges in progress, are not touched.
std::expected<void, std::string> ProxyRuntime::load_client_users() {
  const config::ListenerSaslSettings& sasl = settings_.listener.sasl;
  if (!sasl.enabled()) return {};
  auto users = sasl::load_users_file(sasl.users_file);
  if (!users) return std::unexpected("listener.sasl.users_file: " + users.error());
  std::string mechanisms;
  for (const auto& m : sasl.mechanisms) mechanisms += (mechanisms.empty() ? "" : ", ") + m;
  spdlog::info("listener: SASL {} for {} users from {}", mechanisms, users->size(), sasl.users_file);
  frontend_->set_users(std::make_shared<const sasl::UserStore>(std::move(*users)));
  return {};
}

// The client listener opens only once the upstream can take records: a client
// that connects early would otherwise see Metadata without topics. In spool
// mode the spool takes them and the persisted cluster view answers Metadata,
// so it opens at once.
void ProxyRuntime::check_ready() {
  if (ready_ || draining_) return;
  const bool metadata_known = driver_->upstream().has_metadata();
  const bool producer_id_held = driver_->producer().identity_state() == IdentityState::kReady;
  if (!accepts_before_upstream() && (!metadata_known || !producer_id_held)) return;
  if (auto listening = frontend_->start(); !listening) {
    spdlog::error("start-up failed: client listener: {}", listening.error());
    readiness_.stop();
    drain([this](int) {
      if (on_failed_) on_failed_(1);
    });
    return;
  }
  readiness_.stop();
  ready_ = true;
  health_.set_ready(true);
  const auto id = driver_->producer().identity();
  spdlog::info("ready: clients connect to {}:{}, Prometheus scrapes 127.0.0.1:{} (producer id {}, epoch {})",
               settings_.listener.address.substr(0, settings_.listener.address.rfind(':')), client_port(),
               metrics_port(), id.id.value, id.epoch.value);
  systemd_.ready("serving");
  systemd_status_ = "serving";
  update_spool_readiness();
  if (on_ready_) on_ready_();
}

void ProxyRuntime::keep_cluster_view(spool::SpoolWriter& writer) {
  spool_ = &writer;
  cluster_view_ = std::make_unique<durable::ClusterViewKeeper>(writer);
  FollowedTopics& topics = driver_->followed_topics();
  if (accepts_before_upstream()) {
    topics.restore_view(cluster_view_->view());
    spdlog::info("spool: {} topics known from the spool's cluster view; Metadata answered from it until Kafka does",
                 cluster_view_->view().size());
  }
  topics.answer_known_at_once([this](const std::string& topic) { return acknowledged_from_spool(settings_, topic); });
  durable::ClusterViewKeeper* keeper = cluster_view_.get();
  topics.set_view_listener([keeper](const KnownTopics& known) { keeper->offer(known); });
}

bool ProxyRuntime::accepts_before_upstream() const {
  return spool_ != nullptr && config::spool_ack_requested(settings_.spool);
}

// "Accepting" (docs/design/INTERFACES.md, "HTTP endpoints"): in spool mode
// the proxy is ready while the spool takes records, Kafka reachable or not.
// systemd's STATUS= (`systemctl status`) follows it, sent only on a change.
void ProxyRuntime::update_spool_readiness() {
  if (!ready_ || draining_ || !accepts_before_upstream()) return;
  const bool room = spool_->bytes_used() < static_cast<std::size_t>(settings_.spool.max_bytes) && !spool_->disk_low();
  const bool failing = spool_->failing();
  health_.set_ready(room && !failing, room ? NotReady::kSpoolFailing : NotReady::kSpoolFull);
  const char* status = !room     ? "not accepting: the spool is full; clients get retriable errors until it drains"
                       : failing ? "not accepting: the spool's last write failed; clients get retriable errors"
                                 : "serving";
  if (systemd_status_ == status) return;
  systemd_status_ = status;
  systemd_.status(systemd_status_);
}

// A fatal producer (CLUSTER_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION on
// InitProducerId) can deliver nothing again in this process: every record
// would fail while the probes said "fine". Exiting non-zero after answering
// the clients makes it visible and hands the retry to systemd or Kubernetes
// (Restart=on-failure, the pod's restart backoff), which also retries
// InitProducerId once the operator has fixed the ACL or the cluster.
void ProxyRuntime::exit_if_fatal() {
  if (draining_ || !driver_ || driver_->producer().identity_state() != IdentityState::kFatal) return;
  spdlog::critical(
      "the upstream producer is fatal ({}): no record can be delivered; draining, then exiting 1 so the "
      "supervisor restarts the proxy",
      error_name(driver_->producer().fatal_error()));
  health_.set_ready(false);
  drain([this](int) {
    if (on_failed_) on_failed_(1);
  });
}

void ProxyRuntime::sample_metrics() {
  std::vector<BrokerSample> brokers;
  for (const auto& b : driver_ ? driver_->upstream().broker_status() : std::vector<upstream::BrokerStatus>{}) {
    brokers.push_back(BrokerSample{b.node_id, b.in_flight, b.connected});
  }
  metrics_->sample(driver_ ? driver_->producer().buffered_bytes() : 0, brokers);
  if (driver_) {
    const MemoryBudget& budget = driver_->producer().memory_budget();
    std::array<std::pair<std::string_view, std::size_t>, kMemoryUseCount> by_use;
    for (std::size_t i = 0; i < kMemoryUseCount; ++i) {
      const auto use = static_cast<MemoryUse>(i);
      by_use[i] = {to_string(use), budget.used(use)};
    }
    metrics_->sample_memory(by_use);
    metrics_->sample_topics(driver_->upstream().topics_in_use().size());
  }
  if (spool_writer_) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    metrics_->spool_observer().sample(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  }
}

void ProxyRuntime::drain(std::function<void(int exit_code)> done) {
  if (draining_) return;
  draining_ = true;
  on_drained_ = std::move(done);
  health_.set_draining();
  systemd_.stopping("draining");
  readiness_.stop();
  // Clients already read from are still answered; nothing new is read.
  if (frontend_) frontend_->drain();
  driver_->producer().flush();
  drain_deadline_ms_ = driver_->clock().now_ms() + settings_.shutdown.drain_timeout_ms;
  spdlog::info("draining: {} bytes buffered; deadline in {} ms", driver_->producer().buffered_bytes(),
               settings_.shutdown.drain_timeout_ms);
  drain_timer_.start(0, kDrainPollMs, [this] {
    if (drained()) {
      finish_drain(false);
    } else if (driver_->clock().now_ms() >= drain_deadline_ms_) {
      finish_drain(true);
    }
  });
}

void ProxyRuntime::finish_drain(bool deadline) {
  drain_timer_.stop();
  if (frontend_) frontend_->stop();
  heartbeat_.stop();
  freed_memory_.stop();
  watchdog_.stop();
  // The spool takes nothing more: what is queued is committed, and an abort
  // below fails no durable record in it (they stay owed for the next start).
  if (spool_writer_) {
    spool_writer_->close([this] {
      spool_closed_ = true;
      report_drained();
    });
  }
  int exit_code = 0;
  if (deadline) {
    const std::size_t lost_bytes = driver_->producer().buffered_bytes();
    const bool lost = !spooling_sink_ || spooling_sink_->passthrough_in_flight() > 0;
    driver_->producer().abort_all(ErrorCode::kRequestTimedOut);
    if (lost) {
      spdlog::error("drain deadline reached: {} bytes of accepted records were not delivered", lost_bytes);
      exit_code = 1;
    } else {
      spdlog::info("drain deadline reached: {} spooled records stay in the spool for the next start",
                   spool_writer_->index().unresolved_record_count());
    }
  } else if (driver_->producer().identity_state() == IdentityState::kFatal) {
    spdlog::error("drained: the producer is fatal ({}); accepted records were failed, not delivered",
                  error_name(driver_->producer().fatal_error()));
    exit_code = 1;
  } else {
    spdlog::info("drained: every accepted record was delivered");
  }
  driver_->close();
  drained_exit_code_ = exit_code;
  report_drained();
}

// Once the exit code is known and the spool (if any) is closed.
void ProxyRuntime::report_drained() {
  if (!drained_exit_code_ || (spool_writer_ && !spool_closed_)) return;
  auto done = std::move(on_drained_);
  on_drained_ = nullptr;
  if (done) done(*drained_exit_code_);
}

bool ProxyRuntime::drained() const {
  if (!driver_->producer().idle()) return false;
  return !spooling_sink_ || (feeder_->empty() && spooling_sink_->appending() == 0);
}

// Recovery reads every segment before the loop serves (SPOOL.md,
// "Recovery"): torn tails are cut, corrupt segments moved aside, and a
// directory written by a newer format refuses the start.
std::expected<void, std::string> ProxyRuntime::open_spool() {
  if (!settings_.spool.enabled()) return {};
  auto recovered = spool::SpoolRecovery(settings_.spool.dir, spool::SpoolRecovery::Mode::kRepair).run();
  if (!recovered) return std::unexpected("spool: " + recovered.error());
  const std::size_t damaged = recovered->report.torn_bytes + recovered->report.corrupt_bytes;
  if (damaged > 0) metrics_->spool_observer().on_corrupt_bytes(damaged);
  log_spool_damage(recovered->report);
  spdlog::info("spool: {} opened: {} segments, {} records and {} batches owed", settings_.spool.dir,
               recovered->report.segments.size(), recovered->index.unresolved_record_count(),
               recovered->index.unresolved_batches().size());
  spool_writer_ = std::make_unique<spool::SpoolWriter>(loop_, to_spool_writer_config(settings_), std::move(*recovered),
                                                       &metrics_->spool_observer());
  return {};
}

// Before the producer's first poll: the journal is set before any run can
// arrive, and what the last process left unresolved is restored first, so
// each partition re-sends its unresolved batches before anything new
// (SPOOL.md, "Replay order").
void ProxyRuntime::wire_spool() {
  if (!spool_writer_) return;
  IdempotentProducer& producer = driver_->producer();
  journal_ = std::make_unique<durable::SpoolJournal>(loop_, *spool_writer_);
  producer.set_journal(journal_.get());
  feeder_ = std::make_unique<durable::SpoolFeeder>(loop_, *spool_writer_, producer);
  spooling_sink_ = std::make_unique<durable::SpoolingSink>(
      loop_, *spool_writer_, producer, *feeder_,
      [this](const std::string& topic) { return acknowledged_from_spool(settings_, topic); });
  durable::ReplayPlan plan = durable::plan_replay(*spool_writer_);
  for (const std::string& problem : plan.problems) {
    spdlog::error("spool: cannot replay {}; it stays in the spool", problem);
  }
  const auto batches = static_cast<std::int64_t>(plan.batches.size());
  if (batches > 0 || !plan.unsequenced.empty()) {
    spdlog::info(
        "spool: replaying {} records: {} unresolved batches with their first identity, then {} records "
        "entries",
        plan.records, batches, plan.unsequenced.size());
  }
  producer.restore(std::move(plan.batches));
  if (batches > 0) metrics_->spool_observer().on_replayed_batches(batches);
  for (const durable::FeedItem& item : plan.unsequenced) feeder_->push(item);
}

RecordSink& ProxyRuntime::client_sink() {
  if (spooling_sink_) return *spooling_sink_;
  return driver_->producer();
}

void ProxyRuntime::reload(const config::Settings& reloaded) {
  settings_ = reloaded;
  driver_->producer().apply_config(to_pipeline_config(settings_));
  driver_->set_request_timeout_ms(static_cast<std::int32_t>(settings_.upstream.request_timeout_ms));
  if (frontend_) {
    frontend_->set_idle_timeout_ms(settings_.listener.idle_timeout_ms);
    frontend_->set_upstream_compression(to_pipeline_config(settings_).compression);
  }
  reload_tls();
  if (settings_.listener.tls.enabled && frontend_) static_cast<void>(load_listener_tls(true));
  reload_sasl();
  if (settings_.listener.sasl.enabled()) {
    if (auto users = load_client_users(); !users) {
      spdlog::error("SIGHUP: {}; keeping the users loaded before", users.error());
    }
  }
}

// Certificate, key and CA files are re-read on every SIGHUP, changed or not
// (a rotated certificate keeps its path). New connections use the new
// context; sessions up now keep theirs, so nothing in flight is dropped.
void ProxyRuntime::reload_tls() {
  if (!settings_.upstream.tls.enabled || settings_.upstream.embedded()) return;
  auto security = to_transport_security(settings_);
  if (!security) {
    spdlog::error("SIGHUP: {}; new connections keep the previous TLS files", security.error());
    return;
  }
  driver_->upstream().set_security(*security);
  spdlog::info(
      "SIGHUP: upstream TLS files re-read; new broker connections use them, connections up now are kept (not "
      "dropped)");
}

// [listener.tls]: the listener's certificate, key and CA files, read at
// start (a failure fails start-up) and on every SIGHUP, changed or not. New
// client connections handshake with the new context; connections up keep
// their sessions. A reload that fails keeps the previous context.
std::expected<void, std::string> ProxyRuntime::load_listener_tls(bool reloading) {
  auto context = to_listener_tls_context(settings_);
  if (!context) {
    if (reloading) spdlog::error("SIGHUP: {}; new client connections keep the previous TLS files", context.error());
    return std::unexpected(context.error());
  }
  if (*context == nullptr) return {};
  frontend_->set_tls_context(*context);
  if (reloading) {
    spdlog::info("SIGHUP: listener TLS files re-read; new client connections use them, connections up are kept");
  } else {
    spdlog::info("listener: TLS (TLS 1.2 minimum), client certificates {}",
                 config::to_string(settings_.listener.tls.client_auth));
  }
  return {};
}

// New authentications (reconnects, KIP-368 re-authentications) use what the
// password or token file holds now; live sessions are not touched.
void ProxyRuntime::reload_sasl() {
  if (!sasl_) return;
  if (auto reloaded = sasl_->reload(); !reloaded) {
    spdlog::error("SIGHUP: upstream.sasl: {}; keeping the previous password", reloaded.error());
  } else {
    spdlog::info("SIGHUP: upstream.sasl credentials re-read");
  }
}

std::uint16_t ProxyRuntime::client_port() const {
  return frontend_ ? frontend_->port() : 0;
}
std::uint16_t ProxyRuntime::metrics_port() const {
  return metrics_server_ ? metrics_server_->port() : 0;
}

}  // namespace pp
