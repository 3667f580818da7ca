// One broker's listener and client connections. Requests are handled as they
// arrive; responses leave in request order (the Kafka protocol guarantee),
// each after the configured round-trip delay, so a pipelining client really
// has its batches held by the broker for that long (what the watchdog
// measures). Produce responses can be dropped or the connection cut, with the
// append already done: the classic duplicate makers.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "tests/broker/cluster_state.h"

namespace pp::test_broker {

class BrokerServer {
 public:
  BrokerServer(uv_loop_t* loop, ClusterState& cluster, BrokerId id);
  ~BrokerServer();
  BrokerServer(const BrokerServer&) = delete;
  BrokerServer& operator=(const BrokerServer&) = delete;

  // Listens on the broker's host and port (port 0 the first time; the bound
  // port is stored in the broker's info so a restart reuses the address).
  Status start();
  // Closes the listener and every connection (a broker going down).
  void stop();
  // Closes every client connection, keeping the listener.
  void close_connections();
  std::size_t connection_count() const { return sessions_.size(); }
  bool listening() const { return listening_; }

 private:
  class Session;
  void accept(net::TcpConnection connection);
  // Called by a session that closed itself; it is destroyed on the next loop
  // iteration, outside its own callbacks.
  void retire(Session* session);

  uv_loop_t* loop_;
  ClusterState& cluster_;
  BrokerId id_;
  bool listening_ = false;
  net::TcpListener listener_;
  std::unordered_map<Session*, std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<Session>> retired_;
  net::Timer reaper_;
};

}  // namespace pp::test_broker
