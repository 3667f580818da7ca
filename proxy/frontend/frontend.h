// The legacy-client front end (issue 5): a listener on the loop that looks
// like a one-broker Kafka to its clients. It answers ApiVersions and Metadata
// itself, turns Produce into per-partition record runs for the RecordSink
// (the idempotent pipeline), answers in request order per connection, and
// stops reading from every client while the sink is over its memory budget.
//
// Usage (daemon, on the loop thread):
//   Frontend frontend(loop, config, producer, topic_directory, &observer);
//   if (auto ok = frontend.start(); !ok) { /* bind failed: ok.error() */ }
//   ...
//   frontend.stop();  // stop accepting and close clients; the sink keeps their runs
//
// The front end takes the sink's memory-available listener for itself
// (RecordSink::set_memory_available_listener). Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "proxy/frontend/frontend_config.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/net/deferred.h"
#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/record_sink.h"

namespace pp {

struct FrontendContext;
class ClientSession;

class Frontend {
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

  // SIGHUP: connections idle this long close from the next sweep on.
  void set_idle_timeout_ms(std::int64_t ms);
  // SIGHUP's producer.compression, for judging records against their topic's limit.
  void set_upstream_compression(CompressionCodec codec);

  std::uint16_t port() const;  // the bound port (listen on port 0 in tests)
  const FrontendCounters& counters() const;
  std::size_t open_connections() const { return sessions_.size(); }
  bool backpressure_active() const;

 private:
  void on_accept(net::TcpConnection connection);
  void forget(std::uint64_t session_id);
  void maybe_pause();
  void update_accepting();
  void resume();
  void sweep();
  void defer(std::function<void()> fn);
  void start_sweep();
  std::vector<std::shared_ptr<ClientSession>> sessions_in_turn();
  std::size_t under_share_held(std::size_t share);
  void recheck_shares();
  void recheck_room();

  // Bytes held by connections under their fair share, summed at most once a
  // loop millisecond (admissions meanwhile are added): asked per frame only
  // while the budget is over.
  std::size_t under_share_held_ = 0;
  std::uint64_t under_share_held_ms_ = 0;
  std::size_t under_share_held_share_ = 0;
  bool under_share_held_known_ = false;
  bool share_recheck_scheduled_ = false;
  bool room_recheck_scheduled_ = false;

  uv_loop_t* loop_;
  std::shared_ptr<FrontendContext> context_;
  net::TcpListener listener_;
  net::Timer sweep_timer_;
  ProduceDeadlines deadlines_;
  net::Deferred deferred_;
  std::size_t next_first_session_ = 0;  // rotates who resumes first
  static constexpr std::uint64_t kPauseLogIntervalMs = 5000;
  std::uint64_t last_pause_log_ms_ = 0;
  std::unordered_map<std::uint64_t, std::shared_ptr<ClientSession>> sessions_;
  // listener.max_connections_per_peer: by IP address, and each session's.
  std::unordered_map<std::string, std::size_t> connections_by_peer_;
  std::unordered_map<std::uint64_t, std::string> peer_of_session_;
  std::uint64_t next_session_id_ = 1;
  bool draining_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pp
