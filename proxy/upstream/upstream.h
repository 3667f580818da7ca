// The upstream layer as the pipeline sees it (proxy/pipeline/upstream_port.h):
// a connection pool, one connection per broker, and the Metadata refresh
// policy. It sends what it is given; topics and leadership are the
// pipeline's (TopicTable), which tells it the leaders in use. Everything runs
// on the loop thread that owns it.
//
// Connections: the bootstrap list first; once a Metadata response names the
// brokers, one connection per broker id, opened when first needed and kept up
// (reconnecting with backoff) until the broker leaves the metadata, when it
// closes after its outstanding requests finish. The bootstrap connections are
// then let go, and used again only if no known broker can be reached.
//
// Metadata is refreshed every metadata_max_age_ms, and on request_metadata()
// (calls in one loop iteration become one request, which always asks for every
// topic ever asked about), retried with backoff while no broker answers.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/base/backoff.h"
#include "proxy/net/deferred.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/upstream_port.h"
#include "proxy/upstream/broker_connection.h"
#include "proxy/upstream/broker_directory.h"
#include "proxy/upstream/topic_limit_fetcher.h"
#include "proxy/upstream/upstream_observer.h"

namespace pp::upstream {

struct UpstreamConfig {
  std::vector<std::string> bootstrap_servers;  // "host:port"
  std::string client_id = "produce-proxy";
  int request_timeout_ms = 30000;
  int metadata_max_age_ms = 300000;
  int max_in_flight_per_connection = 32;
  int reconnect_backoff_ms = 50;
  int reconnect_backoff_max_ms = 1000;
  TransportSecurity security;            // [upstream.tls]; plaintext without a context
  UpstreamObserver* observer = nullptr;  // outlives the Upstream
  // upstream.sasl (null: off) and who hears of its re-authentications
  // (metrics); failures reach `observer` like TLS's.
  std::shared_ptr<sasl::Authenticator> sasl;
  std::function<void(std::int32_t node)> on_reauthenticated;
};

// One broker, for metrics and readiness.
struct BrokerStatus {
  std::int32_t node_id = -1;
  std::string address;
  bool connected = false;  // connected and negotiated
  int in_flight = 0;
  std::uint64_t produce_requests_sent = 0;
  std::int16_t produce_version = -1;  // -1: not negotiated
};

class Upstream final : public UpstreamPort, private TopicLimitFetcher::Brokers {
 public:
  using MetadataListener = std::function<void(const MetadataUpdate&)>;
  using NodeReadyListener = std::function<void(std::int32_t node)>;
  using TopicLimitListener = std::function<void(const std::string& topic, std::int32_t max_message_bytes)>;

  Upstream(uv_loop_t* loop, UpstreamConfig config, MetadataListener on_metadata);
  // Outstanding callbacks are dropped, not called: close() first and run the
  // loop to have them fail. Never destroy it from inside one of its callbacks.
  ~Upstream() override;
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  // Parses bootstrap_servers, starts connecting and asks for metadata (the
  // broker list, and the topics already asked about). The error says which
  // entry is not host:port.
  std::expected<void, std::string> start();
  // Fails everything outstanding (NETWORK_EXCEPTION, on later iterations) and
  // stops reconnecting; every later request fails the same way.
  void close();
  // Called (on the loop, never inside a call into Upstream) when `node` may
  // have become able to take a Produce: it finished connecting and
  // negotiating, or a KIP-219 throttle ended. The pipeline's cue to drain.
  void set_node_ready_listener(NodeReadyListener listener) { on_node_ready_ = std::move(listener); }
  // Told each topic's max.message.bytes when first learned and when it
  // changes (TopicLimitFetcher). Without a listener none is asked for.
  void set_topic_limit_listener(TopicLimitListener listener) { topic_limits_.set_listener(std::move(listener)); }
  // SIGHUP: every connection's later requests (and InitProducerId waits) use it.
  void set_request_timeout_ms(int ms);
  // SIGHUP: connections made or remade from now on use it; sessions up now
  // keep theirs, so nothing in flight is dropped.
  void set_security(const TransportSecurity& security);

  // ---- UpstreamPort ----
  bool can_send_produce(std::int32_t node) override;
  // -1 while `node` isn't ready.
  std::int16_t produce_version(std::int32_t node) override;
  // Sent as `version`, or as the negotiated one if that is lower (reported
  // to `done`). Responses of v13+ get their topic names filled back in from
  // the request.
  void send_produce(std::int32_t node, const ProduceRequest& request, std::int16_t version, ProduceDone done) override;
  // Least-loaded ready broker (bootstrap ones too); waits up to
  // request_timeout_ms for one to become ready, then REQUEST_TIMED_OUT.
  void send_init_producer_id(const InitProducerIdRequest& request,
                             std::function<void(InitProducerIdResult)> done) override;
  void request_metadata(const std::vector<std::string>& topics) override;
  // A client's Metadata request: the topics are created upstream (if the
  // cluster auto-creates) only when the client asked for that, and only by
  // the next request, never by later refreshes (a deleted topic stays deleted).
  void request_metadata(const std::vector<std::string>& topics, bool allow_auto_topic_creation);
  // Idle topics: later refreshes no longer ask for them, and a pending
  // creation of one is dropped.
  void forget_topics(const std::vector<std::string>& topics);
  void reset_connection(std::int32_t node) override;
  void learn_brokers(const std::vector<NodeEndpoint>& endpoints) override;
  bool knows_broker(std::int32_t node) const override { return brokers_.find(node) != nullptr; }
  void set_leaders_in_use(const std::set<std::int32_t>& nodes) override;

  // ---- inspection (metrics, readiness, tests) ----
  const BrokerDirectory& brokers() const { return brokers_; }
  bool has_metadata() const { return metadata_responses_ > 0; }
  std::vector<BrokerStatus> broker_status() const;
  std::optional<std::int16_t> negotiated_version(std::int32_t node, ApiKey key) const;
  // The highest version of `key` negotiated with any broker connected now,
  // bootstrap connections included; nullopt while none is (or none serves it).
  std::optional<std::int16_t> highest_negotiated_version(ApiKey key) const;
  std::uint64_t metadata_requests_sent() const { return metadata_requests_sent_; }
  const std::set<std::string>& topics_in_use() const { return topics_; }
  // 0 while not known.
  std::int32_t max_message_bytes(std::string_view topic) const { return topic_limits_.max_message_bytes(topic); }

 private:
  struct InitWaiting {
    InitProducerIdRequest request;
    std::function<void(InitProducerIdResult)> done;
    std::uint64_t deadline_ms = 0;
  };

  BrokerConnection* connection_for(std::int32_t node);  // creates it if the node is known
  BrokerConnection* find_connection(std::int32_t node) const;
  std::unique_ptr<BrokerConnection> make_connection(std::int32_t node, net::HostPort address);
  void on_connection_event(BrokerConnection& connection, BrokerConnection::Event event);
  BrokerConnection* pick_ready(ApiKey key) const override;  // TopicLimitFetcher::Brokers
  void ensure_some_connecting();
  void retire(std::int32_t node);
  void sweep_retired();

  void post_flush();
  void flush_metadata();
  void on_metadata_response(std::expected<MetadataResponse, ErrorCode> result);
  void apply_metadata(const MetadataResponse& response);
  void log_broker_changes(const BrokerChanges& changes) const;
  void connect_to_leaders();
  bool leads_topics_in_use(std::int32_t node) const { return leaders_in_use_.contains(node); }
  bool leader_unreachable() const;
  void flush_init();
  void expire_init();

  template <class Result, class Done>
  void fail_later(Done done, ErrorCode error) {
    deferred_.post([done = std::move(done), error]() mutable { done(Result(std::unexpected(error))); });
  }
  std::uint64_t now() const {
    uv_update_time(loop_);  // see BrokerConnection::now
    return net::now_ms(loop_);
  }

  uv_loop_t* loop_;
  UpstreamConfig config_;
  MetadataListener on_metadata_;
  NodeReadyListener on_node_ready_;
  // Declared before the connections that post to it, so destroyed after them.
  net::Deferred deferred_;
  BrokerDirectory brokers_;
  std::set<std::int32_t> leaders_in_use_;
  std::uint64_t metadata_responses_ = 0;

  std::map<std::int32_t, std::unique_ptr<BrokerConnection>> connections_;  // by node id
  std::vector<std::unique_ptr<BrokerConnection>> bootstrap_;               // ids -1, -2, ...
  std::vector<std::unique_ptr<BrokerConnection>> retired_;                 // closing after their requests
  bool closed_ = false;

  std::set<std::string> topics_;         // every topic asked about: each refresh asks for all
  std::set<std::string> create_wanted_;  // of those, asked for with auto-creation, not yet asked upstream
  bool metadata_wanted_ = false;
  bool metadata_in_flight_ = false;
  bool new_topic_ = false;  // a topic never asked about yet skips the refresh spacing
  bool flush_posted_ = false;
  std::uint64_t next_metadata_ms_ = 0;
  int metadata_failures_ = 0;
  int leader_down_refreshes_ = 0;  // metadata asked again while a leader is unreachable
  std::uint64_t metadata_requests_sent_ = 0;
  ExponentialBackoff metadata_backoff_;
  net::Timer metadata_timer_;  // spacing and retry backoff
  net::Timer max_age_timer_;

  std::deque<InitWaiting> init_waiting_;
  net::Timer init_timer_;

  TopicLimitFetcher topic_limits_;
};

}  // namespace pp::upstream
