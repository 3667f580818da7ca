// A broker of our own on 127.0.0.1, port 0, on the test's loop: it records
// every request and answers as the test scripts it, including with bytes no
// Kafka broker would send. ApiVersions is answered by default (Produce v3-v9,
// Metadata v0-v12, InitProducerId v0-v4, ApiVersions v0-v3). With a TLS
// context it speaks TLS (a server session per connection); the script sees
// plaintext either way.
#pragma once

#include <memory>
#include <vector>

#include "proxy/net/tcp.h"
#include "proxy/net/tls_session.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/frame.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/api_versions.h"

namespace pp::upstream::test {

class ScriptedBroker {
 public:
  struct Request {
    RequestHeader header;
    Bytes body;
  };
  using Handler = std::function<void(ScriptedBroker&, const Request&)>;

  ScriptedBroker(uv_loop_t* loop, Handler handler, bool answer_api_versions = true,
                 std::shared_ptr<net::TlsContext> tls = nullptr)
      : handler_(std::move(handler)), answer_api_versions_(answer_api_versions), tls_(std::move(tls)) {
    auto l = net::TcpListener::listen(loop, net::HostPort{"127.0.0.1", 0},
                                      [this](net::TcpConnection c) { accept(std::move(c)); });
    if (l) listener_ = std::move(*l);
  }

  std::uint16_t port() const { return listener_.port(); }
  net::HostPort address() const { return net::HostPort{"127.0.0.1", port()}; }
  int accepted() const { return static_cast<int>(connections_.size()); }
  const std::vector<Request>& requests() const { return requests_; }
  std::size_t count(ApiKey key) const {
    std::size_t n = 0;
    for (const auto& r : requests_) n += r.header.api_key == key;
    return n;
  }

  // To the newest connection.
  void send_raw(Bytes bytes) {
    if (!connections_.empty()) write(*connections_.back(), std::move(bytes));
  }
  template <Message M>
  void respond(const Request& to, const M& body, std::int16_t version = -1) {
    send_raw(encode_response_frame(to.header.correlation_id, version < 0 ? to.header.api_version : version, body));
  }
  void close_connections() {
    for (auto& c : connections_) c->tcp.close();
  }
  void stop() {
    close_connections();
    listener_.close();
  }

  static ApiVersionsResponse default_api_versions() {
    ApiVersionsResponse r;
    r.api_keys = {{0, 3, 9, {}}, {3, 0, 12, {}}, {18, 0, 3, {}}, {22, 0, 4, {}}};
    return r;
  }

 private:
  struct Connection {
    net::TcpConnection tcp;
    FrameReader reader{1 << 20};
    std::unique_ptr<net::TlsSession> tls;
  };

  void accept(net::TcpConnection c) {
    connections_.push_back(std::make_unique<Connection>());
    Connection* conn = connections_.back().get();
    conn->tcp = std::move(c);
    if (tls_) {
      conn->tls = std::make_unique<net::TlsSession>(tls_, net::TlsSession::Role::kServer, "", false);
      (void)conn->tls->start();
    }
    conn->tcp.set_callbacks([this, conn](ByteView data) { on_bytes(*conn, data); }, [](int) {});
    conn->tcp.start_reading();
  }

  void write(Connection& conn, Bytes bytes) {
    if (!conn.tls) {
      conn.tcp.write(std::move(bytes));
      return;
    }
    (void)conn.tls->write(std::move(bytes));
    conn.tcp.write(conn.tls->take_output());
  }

  void on_bytes(Connection& conn, ByteView data) {
    if (!conn.tls) {
      on_data(conn, data);
      return;
    }
    auto fed = conn.tls->feed(data);
    conn.tcp.write(conn.tls->take_output());  // the handshake's answers, or an alert
    if (!fed) {
      conn.tcp.close();
      return;
    }
    on_data(conn, fed->plaintext);
  }

  void on_data(Connection& conn, ByteView data) {
    if (!conn.reader.append(data)) return;
    while (auto frame = conn.reader.pop()) {
      WireReader r(*frame);
      auto header = decode_request_header(r);
      if (!header) continue;
      Request request{header->header, Bytes(r.rest().begin(), r.rest().end())};
      requests_.push_back(request);
      if (answer_api_versions_ && request.header.api_key == ApiKey::kApiVersions) {
        respond(request, default_api_versions());
        continue;
      }
      if (handler_) handler_(*this, request);
    }
  }

  Handler handler_;
  bool answer_api_versions_;
  std::shared_ptr<net::TlsContext> tls_;
  net::TcpListener listener_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Request> requests_;
};

}  // namespace pp::upstream::test
