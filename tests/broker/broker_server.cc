#include "tests/broker/broker_server.h"

#include <deque>
#include <random>

#include "proxy/protocol/frame.h"
#include "tests/broker/log.h"
#include "tests/broker/request_router.h"

namespace pp::test_broker {

class BrokerServer::Session {
 public:
  Session(BrokerServer& server, net::TcpConnection connection)
      : server_(server),
        connection_(std::move(connection)),
        reader_(server.cluster_.options().max_request_bytes),
        timer_(server.loop_),
        peer_(connection_.peer_name()) {}

  ~Session() { drop_queue(); }

  void start() {
    connection_.set_callbacks([this](ByteView data) { on_data(data); },
                              [this](int status) {
                                log().debug("broker {}: {} disconnected ({})", server_.id_, peer_,
                                            status == 0 ? "EOF" : uv_strerror(status));
                                close();
                              });
    connection_.start_reading();
  }

  // Idempotent. Held batches of unwritten responses are released: the
  // broker no longer holds them once the connection is gone.
  void close() {
    if (closed_) return;
    closed_ = true;
    drop_queue();
    timer_.stop();
    connection_.close();
    server_.retire(this);
  }

 private:
  struct Pending {
    std::uint64_t due_ms = 0;
    Bytes frame;
    std::function<Bytes()> recompute;
    std::vector<HeldBatch> held;
    bool drop = false;
    bool close_instead = false;
  };

  ClusterState& cluster() { return server_.cluster_; }

  void drop_queue() {
    for (auto& p : queue_) release(p.held);
    queue_.clear();
  }

  void on_data(ByteView data) {
    if (auto ok = reader_.append(data); !ok) {
      log().warn("broker {}: closing connection from {}: bad frame: {}", server_.id_, peer_, ok.error().describe());
      close();
      return;
    }
    while (!closed_) {
      auto frame = reader_.pop();
      if (!frame) break;
      on_request(*frame);
    }
  }

  static bool is_produce(ByteView frame) {
    return frame.size() >= 2 && frame[0] == 0 && frame[1] == static_cast<std::uint8_t>(ApiKey::kProduce);
  }

  void on_request(ByteView frame) {
    FaultSettings& faults = cluster().faults();
    bool cut_after_append = false;
    if (is_produce(frame)) {
      auto it = faults.disconnects.find(server_.id_);
      if (it != faults.disconnects.end() && it->second.remaining > 0) {
        --it->second.remaining;
        if (!it->second.after_append) {
          log().info("broker {}: injected disconnect of {} before a Produce was appended", server_.id_, peer_);
          close();
          return;
        }
        cut_after_append = true;
      }
    }

    RoutedRequest routed = route_request(cluster(), server_.id_, frame);
    log().trace("broker {}: {} v{} correlation {} from {}", server_.id_, api_name(routed.api), routed.version,
                routed.correlation_id, peer_);
    if (routed.action == RoutedRequest::Action::kClose) {
      log().warn("broker {}: closing connection from {}: {}", server_.id_, peer_, routed.close_reason);
      close();
      return;
    }
    if (cut_after_append) {
      release(routed.held);
      log().info("broker {}: injected disconnect of {} after a Produce was appended", server_.id_, peer_);
      close();
      return;
    }
    if (routed.action == RoutedRequest::Action::kNoResponse) {
      release(routed.held);
      return;
    }

    Pending p;
    p.due_ms = net::now_ms(server_.loop_) + faults.rtt_ms + routed.wait_ms;
    p.frame = std::move(routed.frame);
    p.recompute = std::move(routed.recompute);
    p.held = std::move(routed.held);
    if (routed.api == ApiKey::kProduce && faults.drop_rate > 0.0) {
      std::bernoulli_distribution dice(std::min(faults.drop_rate, 1.0));
      if (dice(cluster().rng())) {
        p.drop = true;
        p.close_instead = faults.drop_mode == DropMode::kCloseConnection;
      }
    }
    queue_.push_back(std::move(p));
    flush();
  }

  // Writes every response that is due, in order; re-arms the timer for the next.
  void flush() {
    const std::uint64_t now = net::now_ms(server_.loop_);
    while (!closed_ && !queue_.empty() && queue_.front().due_ms <= now) {
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      release(p.held);
      if (p.drop && p.close_instead) {
        log().debug("broker {}: dropping a Produce response and closing {}", server_.id_, peer_);
        close();
        return;
      }
      if (p.drop && !return_path_dead_) {
        log().debug("broker {}: dropping a Produce response to {}; nothing more is written to it", server_.id_, peer_);
        return_path_dead_ = true;
      }
      if (return_path_dead_) continue;
      connection_.write(p.recompute ? p.recompute() : std::move(p.frame));
    }
    if (!closed_ && !queue_.empty()) {
      timer_.start(queue_.front().due_ms - now, 0, [this] { flush(); });
    }
  }

  BrokerServer& server_;
  net::TcpConnection connection_;
  FrameReader reader_;
  net::Timer timer_;
  std::string peer_;
  std::deque<Pending> queue_;
  bool closed_ = false;
  bool return_path_dead_ = false;  // after a silent drop (DropMode::kSilent)
};

BrokerServer::BrokerServer(uv_loop_t* loop, ClusterState& cluster, BrokerId id)
    : loop_(loop), cluster_(cluster), id_(id), reaper_(loop) {}

BrokerServer::~BrokerServer() {
  stop();
}

Status BrokerServer::start() {
  if (listening_) return {};
  BrokerInfo* me = cluster_.broker(id_);
  auto listener =
      net::TcpListener::listen(loop_, {me->host, me->port}, [this](net::TcpConnection c) { accept(std::move(c)); });
  if (!listener) return std::unexpected(listener.error());
  listener_ = std::move(*listener);
  me->port = listener_.port();
  listening_ = true;
  return {};
}

void BrokerServer::stop() {
  close_connections();
  listener_.close();
  listening_ = false;
}

void BrokerServer::close_connections() {
  std::vector<Session*> all;
  for (auto& [ptr, owner] : sessions_) all.push_back(ptr);
  for (Session* s : all) s->close();
  // Not inside any session callback here (called from cluster tasks), so the
  // sessions can go at once.
  retired_.clear();
}

void BrokerServer::accept(net::TcpConnection connection) {
  auto session = std::make_unique<Session>(*this, std::move(connection));
  Session* raw = session.get();
  sessions_.emplace(raw, std::move(session));
  raw->start();
}

void BrokerServer::retire(Session* session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  retired_.push_back(std::move(it->second));
  sessions_.erase(it);
  if (!reaper_.active()) reaper_.start(0, 0, [this] { retired_.clear(); });
}

}  // namespace pp::test_broker
