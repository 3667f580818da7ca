// Transport over real loopback sockets on a real loop: a TLS "broker" in
// this process (a TcpListener whose accepted socket runs a server
// TlsSession, echoing what it decrypts), and peers that misbehave.
#include "proxy/upstream/transport.h"

#include <gtest/gtest.h>

#include <list>

#include "proxy/net/timer.h"
#include "tests/support/test_pki.h"

namespace pp::upstream {
namespace {

// Accepts TLS connections and echoes their plaintext back.
class EchoTlsServer {
 public:
  EchoTlsServer(uv_loop_t* loop, std::shared_ptr<net::TlsContext> context) : context_(std::move(context)) {
    auto listening =
        net::TcpListener::listen(loop, {"127.0.0.1", 0}, [this](net::TcpConnection c) { accept(std::move(c)); });
    if (!listening) throw std::runtime_error(listening.error());
    listener_ = std::move(*listening);
  }
  std::uint16_t port() const { return listener_.port(); }
  void close() {
    listener_.close();
    peers_.clear();
  }

 private:
  struct Peer {
    net::TcpConnection tcp;
    std::unique_ptr<net::TlsSession> tls;
  };
  void accept(net::TcpConnection c) {
    peers_.push_back(
        Peer{std::move(c), std::make_unique<net::TlsSession>(context_, net::TlsSession::Role::kServer, "", false)});
    Peer* p = &peers_.back();
    (void)p->tls->start();
    p->tcp.set_callbacks(
        [p](ByteView data) {
          auto fed = p->tls->feed(data);
          if (fed && !fed->plaintext.empty()) (void)p->tls->write(std::move(fed->plaintext));
          if (Bytes out = p->tls->take_output(); !out.empty()) p->tcp.write(std::move(out));
          if (!fed) p->tcp.close();
        },
        [p](int) { p->tcp.close(); });
    p->tcp.start_reading();
  }

  std::shared_ptr<net::TlsContext> context_;
  net::TcpListener listener_;
  std::list<Peer> peers_;
};

// Accepts, reads the ClientHello, and hangs up: a broker dying mid-handshake.
class HangUpServer {
 public:
  explicit HangUpServer(uv_loop_t* loop) {
    auto listening = net::TcpListener::listen(loop, {"127.0.0.1", 0}, [this](net::TcpConnection c) {
      peers_.push_back(std::move(c));
      net::TcpConnection* p = &peers_.back();
      p->set_callbacks(
          [this, p](ByteView data) {
            hello_bytes += data.size();
            p->close();
          },
          [p](int) { p->close(); });
      p->start_reading();
    });
    if (!listening) throw std::runtime_error(listening.error());
    listener_ = std::move(*listening);
  }
  std::uint16_t port() const { return listener_.port(); }
  void close() {
    listener_.close();
    peers_.clear();
  }
  std::size_t hello_bytes = 0;

 private:
  net::TcpListener listener_;
  std::list<net::TcpConnection> peers_;
};

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override { uv_loop_init(&loop_); }
  void TearDown() override {
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open";
  }

  Transport::Callbacks recording_callbacks() {
    return Transport::Callbacks{[this] { established_ = true; },
                                [this](ByteView d) { received_.insert(received_.end(), d.begin(), d.end()); },
                                [this](const TransportClosed& c) {
                                  closed_reason_ = c.reason;
                                  auth_failure_ = std::string(c.auth_failure);
                                }};
  }

  // Connects a Transport to 127.0.0.1:port, writes `first` right after
  // start (so during a TLS handshake), and runs the loop until `done` (or
  // 10 s: a guard timer fails the test rather than hanging it).
  void run(std::uint16_t port, const TransportSecurity& security, Bytes first, const std::function<bool()>& done) {
    net::TcpConnection tcp;
    tcp = net::TcpConnection::connect(&loop_, {"127.0.0.1", port}, [&](int status) {
      ASSERT_EQ(status, 0);
      auto started = transport_.start(std::move(tcp), security, "127.0.0.1", recording_callbacks());
      ASSERT_TRUE(started.has_value()) << started.error().reason;
      if (transport_.established()) established_ = true;
      if (!first.empty()) transport_.write(std::move(first));
    });
    bool timed_out = false;
    net::Timer guard(&loop_);
    guard.start(10000, 0, [&] { timed_out = true; });
    while (!done() && !timed_out && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    EXPECT_FALSE(timed_out);
    guard.stop();
    transport_.close();
    tcp.close();
  }

  static Bytes pattern(std::size_t n) {
    Bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
    return b;
  }

  uv_loop_t loop_{};
  test::TestPki pki_;
  Transport transport_;
  bool established_ = false;
  Bytes received_;
  std::optional<std::string> closed_reason_;
  std::string auth_failure_;
};

TEST_F(TransportTest, TlsEchoOfOneMebibyteWrittenBeforeTheHandshakeEnds) {
  auto server_ctx = net::TlsContext::server(pki_.broker.cert, pki_.broker.key);
  auto client_ctx = net::TlsContext::client(net::TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(server_ctx && client_ctx);
  EchoTlsServer server(&loop_, *server_ctx);
  const Bytes sent = pattern(1 << 20);
  run(server.port(), TransportSecurity{*client_ctx, "", true}, sent,
      [&] { return received_.size() >= sent.size() || closed_reason_.has_value(); });
  server.close();
  EXPECT_TRUE(established_);
  EXPECT_TRUE(transport_.tls() || !closed_reason_);
  ASSERT_FALSE(closed_reason_.has_value()) << *closed_reason_;
  EXPECT_EQ(received_, sent);
}

TEST_F(TransportTest, UntrustedBrokerIsAnAuthFailureNamingTheReason) {
  auto server_ctx = net::TlsContext::server(pki_.broker.cert, pki_.broker.key);
  auto client_ctx = net::TlsContext::client(net::TlsFiles{pki_.other_ca_file, "", ""});
  ASSERT_TRUE(server_ctx && client_ctx);
  EchoTlsServer server(&loop_, *server_ctx);
  run(server.port(), TransportSecurity{*client_ctx, "", true}, pattern(100),
      [&] { return closed_reason_.has_value(); });
  server.close();
  EXPECT_FALSE(established_);
  ASSERT_TRUE(closed_reason_.has_value());
  EXPECT_EQ(auth_failure_, "tls_certificate");
  EXPECT_NE(closed_reason_->find("certificate verify failed"), std::string::npos) << *closed_reason_;
  EXPECT_TRUE(received_.empty());
}

TEST_F(TransportTest, ServerNameOverridesTheHostForVerification) {
  auto server_ctx = net::TlsContext::server(pki_.other_host.cert, pki_.other_host.key);
  auto client_ctx = net::TlsContext::client(net::TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(server_ctx && client_ctx);
  EchoTlsServer server(&loop_, *server_ctx);
  run(server.port(), TransportSecurity{*client_ctx, "", true}, pattern(10), [&] { return closed_reason_.has_value(); });
  EXPECT_EQ(auth_failure_, "tls_hostname");
  closed_reason_.reset();
  established_ = false;
  run(server.port(), TransportSecurity{*client_ctx, "kafka.example.net", true}, pattern(10),
      [&] { return received_.size() >= 10 || closed_reason_.has_value(); });
  server.close();
  EXPECT_TRUE(established_);
  EXPECT_EQ(received_, pattern(10));
}

TEST_F(TransportTest, BrokerHangingUpMidHandshakeIsAHandshakeFailure) {
  auto client_ctx = net::TlsContext::client(net::TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(client_ctx);
  HangUpServer server(&loop_);
  run(server.port(), TransportSecurity{*client_ctx, "", true}, {}, [&] { return closed_reason_.has_value(); });
  server.close();
  EXPECT_GT(server.hello_bytes, 0u) << "the ClientHello was sent";
  EXPECT_FALSE(established_);
  EXPECT_EQ(auth_failure_, "tls_handshake");
  EXPECT_NE(closed_reason_->find("during the TLS handshake"), std::string::npos) << *closed_reason_;
}

TEST_F(TransportTest, PlaintextPassesBytesThrough) {
  HangUpServer server(&loop_);
  run(server.port(), TransportSecurity{}, pattern(10), [&] { return closed_reason_.has_value(); });
  server.close();
  EXPECT_TRUE(established_);
  EXPECT_EQ(server.hello_bytes, 10u);
  EXPECT_EQ(auth_failure_, "") << "a plaintext close is no auth failure";
}

}  // namespace
}  // namespace pp::upstream
