// The legacy-client front end: a listener on the loop that looks like a
// one-broker Kafka to its clients. It answers ApiVersions and Metadata
// itself, turns Produce into per-partition record runs for the RecordSink
// (the idempotent pipeline) and answers in request order per connection.
// Frontend keeps the listener, the open sessions (max_connections and
// max_connections_per_peer) and their sweep (idle connections, overdue
// frames); FlowControl, which it owns, decides who may read.
//
// The front end's files, in the order their includes run (each includes only
// files of earlier rows): settings, log, observer, answers and per-fact state
// (frontend_config, log, frontend_observer, topic_directory,
// client_producers, produce_conversion, produce_deadlines,
// deadline_answer_log, *_answer); flow_control; frontend_context;
// client_session; the handlers (decode_room, pending_produce, *_handler);
// request_dispatch; frontend.
//
// Usage (daemon, on the loop thread):
//   Frontend frontend(loop, config, producer, topic_directory, &observer);
//   if (auto ok = frontend.start(); !ok) { /* bind failed: ok.error() */ }
//   ...
//   frontend.stop();  // stop accepting and close clients; the sink keeps their runs
//
// The front end (its FlowControl) takes the sink's memory budget's available
// and room listeners for itself. Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "proxy/frontend/client_handshakes.h"
#include "proxy/frontend/client_producers.h"
#include "proxy/frontend/client_session.h"
#include "proxy/frontend/flow_control.h"
#include "proxy/frontend/frontend_config.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/frontend/request_dispatch.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/net/deferred.h"
#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/record_sink.h"

namespace pp {

class Frontend final : private SessionRegistry, private ClientHandshakes::Owner {
 public:
  // `sink`, `topics` and `observer` (may be null) must outlive the front end.
  Frontend(uv_loop_t* loop, FrontendConfig config, RecordSink& sink, TopicDirectory& topics,
           FrontendObserver* observer = nullptr);
  ~Frontend();
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;

  // Binds and listens on config.listen_address; the error names the address.
  std::expected<void, std::string> start();
  // Shutdown, first step: stop accepting and stop reading requests; every
  // request already read is still answered, then its connection closes. A
  // client that gets its answers does not retry (and duplicate) records the
  // sink is delivering anyway.
  void drain();
  // Stops accepting, closes every client (unwritten answers are dropped; the
  // sink keeps and delivers the runs it took). Idempotent; after drain(), at
  // the drain deadline.
  void stop();

  // [listener.tls]: the server context new client connections handshake
  // with; null (the default) serves plaintext. Set before start(), and again
  // on SIGHUP, when connections already up keep their sessions. A TLS
  // listener stays TLS: a null context on a TLS listener is ignored.
  void set_tls_context(std::shared_ptr<net::TlsContext> context);

  // SIGHUP: connections idle this long close from the next sweep on.
  void set_idle_timeout_ms(std::int64_t ms);
  // SIGHUP's producer.compression, for judging records against their topic's limit.
  void set_upstream_compression(CompressionCodec codec);
  // [listener.sasl]: the users SASL logins are checked against (start-up,
  // SIGHUP). Exchanges in progress finish against the store they began with.
  void set_users(std::shared_ptr<const sasl::UserStore> users);

  // The idempotent clients' dedup state, shared by every session: restored
  // at start and snapshotted into the spool by the daemon
  // (daemon/client_state_restore.h). Loop thread; lives as long as this.
  ClientProducers& client_producers();

  std::uint16_t port() const;  // the bound port (listen on port 0 in tests)
  const FrontendCounters& counters() const;
  std::size_t open_connections() const { return sessions_.size(); }
  bool backpressure_active() const;

 private:
  // SessionRegistry: a session closed (on its own callbacks or ours); forget it.
  void session_closed(std::uint64_t session_id) override;
  void on_accept(net::TcpConnection connection);
  void sweep();
  void start_sweep();
  // ClientHandshakes::Owner.
  void handshake_done(std::uint64_t id, net::AcceptedConnection connection, Principal principal) override;
  void handshake_failed(std::uint64_t id) override;
  // A snapshot (sessions may close while we go round), starting where
  void start_session(std::uint64_t id, net::AcceptedConnection connection, const Principal& principal);
  // Session or handshake `id` is gone: its peer's count goes down.
  void forget_peer(std::uint64_t id);
  // FlowControl's rotation says.
  std::vector<std::shared_ptr<ClientSession>> sessions_in_turn();

  uv_loop_t* loop_;
  std::shared_ptr<FrontendContext> context_;
  net::TcpListener listener_;
  net::Timer sweep_timer_;
  ProduceDeadlines deadlines_;
  net::Deferred deferred_;
  // After the listener and the deferred queue it refers to.
  FlowControl flow_;
  RequestDispatch dispatch_;
  ClientHandshakes handshakes_;
  std::unordered_map<std::uint64_t, std::shared_ptr<ClientSession>> sessions_;
  // listener.max_connections_per_peer: by IP address, and each session's.
  std::unordered_map<std::string, std::size_t> connections_by_peer_;
  std::unordered_map<std::uint64_t, std::string> peer_of_session_;
  std::uint64_t next_session_id_ = 1;
  bool draining_ = false;
};

}  // namespace pp
