// AcceptedConnection on a real loop over loopback: a TLS client (TlsSession
// over a TcpConnection) handshakes with the server side, its first request
// sent right behind its Finished reaches the session only once it reads,
// on a later turn, and the answer comes back encrypted; a plaintext client on
// a TLS listener and a TLS client on a plaintext one are each told apart.
#include "proxy/net/accepted_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proxy/net/timer.h"
#include "tests/support/test_pki.h"
#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

class AcceptedConnectionTest : public LoopTest {
 protected:
  // The listener's ration of signing steps lives as long as the test's loop.
  void SetUp() override {
    LoopTest::SetUp();
    pacer_.emplace(&loop_);
  }
  void TearDown() override {
    pacer_.reset();
    LoopTest::TearDown();
  }

  // Runs the loop until `done` or 5 s.
  template <class Done>
  void run_until(Done done) {
    Timer guard(&loop_);
    bool timed_out = false;
    guard.start(5000, 0, [&] { timed_out = true; });
    while (!done() && !timed_out && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    EXPECT_FALSE(timed_out) << "timed out";
  }

  test::TestPki pki_;
  std::optional<HandshakePacer> pacer_;
};

TEST_F(AcceptedConnectionTest, TlsHandshakeThenEarlyRequestThenAnswer) {
  auto server_ctx = TlsContext::server(
      TlsServerFiles{pki_.broker.cert, pki_.broker.key, pki_.ca_file, ClientCertificates::kRequired});
  ASSERT_TRUE(server_ctx.has_value()) << server_ctx.error();
  std::vector<AcceptedConnection> accepted;
  std::optional<std::optional<TlsFailure>> outcome;
  Bytes server_got;
  auto listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::tls(std::move(c), *server_ctx, *pacer_,
                                               [&](const std::optional<TlsFailure>& f) { outcome = f; }));
  });
  ASSERT_TRUE(listener.has_value());

  auto client_ctx = TlsContext::client(TlsFiles{pki_.ca_file, pki_.client.cert, pki_.client.key});
  ASSERT_TRUE(client_ctx.has_value()) << client_ctx.error();
  TlsSession client_tls(*client_ctx, TlsSession::Role::kClient, "localhost", true);
  Bytes client_got;
  TcpConnection client = TcpConnection::connect(&loop_, {"127.0.0.1", listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0);
    client.set_callbacks(
        [&](ByteView d) {
          auto fed = client_tls.feed(d);
          ASSERT_TRUE(fed.has_value()) << fed.error().reason;
          client_got.insert(client_got.end(), fed->plaintext.begin(), fed->plaintext.end());
          if (Bytes out = client_tls.take_output(); !out.empty()) client.write(std::move(out));
        },
        [](int) {});
    client.start_reading();
    ASSERT_TRUE(client_tls.start().has_value());
    // Queued now, sent encrypted right behind the client's Finished.
    ASSERT_TRUE(client_tls.write(text("request")).has_value());
    client.write(client_tls.take_output());
  });
  run_until([&] { return outcome.has_value(); });
  ASSERT_TRUE(outcome.has_value());
  ASSERT_FALSE(*outcome) << (*outcome)->reason;
  AcceptedConnection& server = accepted.front();
  EXPECT_TRUE(server.tls());
  EXPECT_EQ(server.peer_common_name(), std::optional<std::string>("produce-proxy client"));
  EXPECT_EQ(server.protocol(), "TLSv1.3");

  // The session sets its callbacks, then reads: the early request arrives
  // on a later turn, not inside start_reading().
  server.set_callbacks([&](ByteView d) { server_got.insert(server_got.end(), d.begin(), d.end()); }, [](int) {});
  server.start_reading();
  EXPECT_TRUE(server_got.empty());
  run_until([&] { return server_got.size() >= 7; });
  EXPECT_EQ(server_got, text("request"));

  server.write(text("answer"));
  run_until([&] { return client_got.size() >= 6; });
  EXPECT_EQ(client_got, text("answer"));

  client.close();
  accepted.clear();
  listener->close();
}

TEST_F(AcceptedConnectionTest, PlaintextOnATlsListenerAndTlsOnAPlaintextOne) {
  auto server_ctx =
      TlsContext::server(TlsServerFiles{pki_.broker.cert, pki_.broker.key, "", ClientCertificates::kNone});
  ASSERT_TRUE(server_ctx.has_value()) << server_ctx.error();
  std::vector<AcceptedConnection> accepted;
  std::optional<std::optional<TlsFailure>> tls_outcome;
  bool tls_attempt = false;
  int plain_closed = 1;
  auto tls_listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::tls(std::move(c), *server_ctx, *pacer_,
                                               [&](const std::optional<TlsFailure>& f) { tls_outcome = f; }));
  });
  auto plain_listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::plaintext(std::move(c), [&] { tls_attempt = true; }));
    accepted.back().set_callbacks([](ByteView) { ADD_FAILURE() << "TLS bytes reached the session"; },
                                  [&](int status) { plain_closed = status; });
    accepted.back().start_reading();
  });
  ASSERT_TRUE(tls_listener.has_value() && plain_listener.has_value());

  // A Kafka request (size prefix 0x00...) to the TLS port.
  TcpConnection kafka_client = TcpConnection::connect(&loop_, {"127.0.0.1", tls_listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0);
    kafka_client.write(Bytes{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0});
  });
  // A ClientHello to the plaintext port.
  auto client_ctx = TlsContext::client(TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(client_ctx.has_value());
  TlsSession hello(*client_ctx, TlsSession::Role::kClient, "localhost", true);
  TcpConnection tls_client = TcpConnection::connect(&loop_, {"127.0.0.1", plain_listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0);
    ASSERT_TRUE(hello.start().has_value());
    tls_client.write(hello.take_output());
  });
  run_until([&] { return tls_outcome.has_value() && tls_attempt; });
  ASSERT_TRUE(tls_outcome.has_value() && tls_outcome->has_value());
  EXPECT_EQ((*tls_outcome)->kind, TlsFailureKind::kNotTls);
  EXPECT_TRUE(tls_attempt);
  EXPECT_EQ(plain_closed, UV_EPROTO);

  kafka_client.close();
  tls_client.close();
  accepted.clear();
  tls_listener->close();
  plain_listener->close();
}

// A blocking loopback socket of the test's own, outside the loop, so that
// bytes are on the wire before the loop runs a turn.
int connect_raw(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) return -1;
  return fd;
}

bool send_raw(int fd, ByteView bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// The server has answered this client's ClientHello (its flight is waiting).
bool has_answer(int fd) {
  std::uint8_t byte = 0;
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

// Many ClientHellos in one loop turn: the server signs only a few of them
// before a plaintext connection's request, read in the same turn, reaches
// its session; the rest are answered on later turns, every one of them.
TEST_F(AcceptedConnectionTest, ClientHellosInOneTurnDoNotHoldUpAPlaintextRequest) {
  constexpr int kHellos = 24;
  auto server_ctx =
      TlsContext::server(TlsServerFiles{pki_.broker.cert, pki_.broker.key, "", ClientCertificates::kNone});
  ASSERT_TRUE(server_ctx.has_value()) << server_ctx.error();
  std::vector<AcceptedConnection> accepted;
  int handshake_outcomes = 0;
  auto tls_listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::tls(std::move(c), *server_ctx, *pacer_,
                                               [&](const std::optional<TlsFailure>&) { ++handshake_outcomes; }));
  });
  std::vector<int> tls_fds;
  std::optional<int> answered_before_request;
  auto plain_listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::plaintext(std::move(c), nullptr));
    accepted.back().set_callbacks(
        [&](ByteView) {
          if (answered_before_request) return;
          answered_before_request = static_cast<int>(std::count_if(tls_fds.begin(), tls_fds.end(), has_answer));
        },
        [](int) {});
    accepted.back().start_reading();
  });
  ASSERT_TRUE(tls_listener.has_value() && plain_listener.has_value());

  auto client_ctx = TlsContext::client(TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(client_ctx.has_value());
  for (int i = 0; i < kHellos; ++i) {
    TlsSession client(*client_ctx, TlsSession::Role::kClient, "localhost", false);
    ASSERT_TRUE(client.start().has_value());
    const int fd = connect_raw(tls_listener->port());
    ASSERT_GE(fd, 0);
    tls_fds.push_back(fd);
    ASSERT_TRUE(send_raw(fd, client.take_output()));
  }
  const int plain_fd = connect_raw(plain_listener->port());
  ASSERT_GE(plain_fd, 0);
  ASSERT_TRUE(send_raw(plain_fd, Bytes{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0}));

  run_until([&] { return answered_before_request.has_value(); });
  ASSERT_TRUE(answered_before_request.has_value());
  EXPECT_LE(*answered_before_request, 4) << "ClientHellos signed before the plaintext request was read";
  run_until([&] { return std::all_of(tls_fds.begin(), tls_fds.end(), has_answer); });
  EXPECT_TRUE(std::all_of(tls_fds.begin(), tls_fds.end(), has_answer)) << "a waiting ClientHello was never answered";
  EXPECT_EQ(handshake_outcomes, 0);

  for (const int fd : tls_fds) ::close(fd);
  ::close(plain_fd);
  accepted.clear();
  tls_listener->close();
  plain_listener->close();
}

// A TLS session's read target gets the records decrypted straight into it,
// as a plaintext socket's read does, and what the target does not ask for
// reaches the data callback; the bytes arrive whole and in order either way.
TEST_F(AcceptedConnectionTest, TlsRecordsAreDecryptedIntoTheReadTarget) {
  auto server_ctx =
      TlsContext::server(TlsServerFiles{pki_.broker.cert, pki_.broker.key, "", ClientCertificates::kNone});
  ASSERT_TRUE(server_ctx.has_value()) << server_ctx.error();
  std::vector<AcceptedConnection> accepted;
  std::optional<std::optional<TlsFailure>> outcome;
  auto listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(AcceptedConnection::tls(std::move(c), *server_ctx, *pacer_,
                                               [&](const std::optional<TlsFailure>& f) { outcome = f; }));
  });
  ASSERT_TRUE(listener.has_value());
  auto client_ctx = TlsContext::client(TlsFiles{pki_.ca_file, "", ""});
  ASSERT_TRUE(client_ctx.has_value()) << client_ctx.error();
  TlsSession client_tls(*client_ctx, TlsSession::Role::kClient, "localhost", true);
  TcpConnection client = TcpConnection::connect(&loop_, {"127.0.0.1", listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0);
    client.set_callbacks(
        [&](ByteView d) {
          ASSERT_TRUE(client_tls.feed(d).has_value());
          if (Bytes out = client_tls.take_output(); !out.empty()) client.write(std::move(out));
        },
        [](int) {});
    client.start_reading();
    ASSERT_TRUE(client_tls.start().has_value());
    client.write(client_tls.take_output());
  });
  run_until([&] { return outcome.has_value(); });
  ASSERT_TRUE(outcome.has_value() && !*outcome);

  // The first 100,000 bytes are the target's; the rest goes to on_data.
  Bytes target(100000);
  std::size_t filled = 0;
  Bytes through_data;
  AcceptedConnection& server = accepted.front();
  server.set_callbacks([&](ByteView d) { through_data.insert(through_data.end(), d.begin(), d.end()); }, [](int) {});
  server.set_read_target([&] { return std::span<std::uint8_t>(target).subspan(filled); },
                         [&](std::size_t n) { filled += n; });
  server.start_reading();
  Bytes sent(150000);
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<std::uint8_t>(i * 7);
  ASSERT_TRUE(client_tls.write(sent).has_value());
  client.write(client_tls.take_output());
  run_until([&] { return filled + through_data.size() >= sent.size(); });
  EXPECT_EQ(filled, target.size());
  EXPECT_EQ(target, Bytes(sent.begin(), sent.begin() + 100000));
  EXPECT_EQ(through_data, Bytes(sent.begin() + 100000, sent.end()));

  client.close();
  accepted.clear();
  listener->close();
}

}  // namespace
}  // namespace pp::net
