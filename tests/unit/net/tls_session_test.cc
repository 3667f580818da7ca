// TlsSession against a real OpenSSL server session, both in this process,
// their ciphertext carried between them by the test: in chunks as small as
// one byte, so every record straddles feeds and every step of the handshake
// meets SSL_ERROR_WANT_READ.
#include "proxy/net/tls_session.h"

#include <gtest/gtest.h>

#include <array>

#include "tests/support/test_pki.h"

namespace pp::net {
namespace {

using test::KeyPair;

Bytes pattern(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 31 + seed) & 0xff);
  return b;
}

struct Pair {
  std::unique_ptr<TlsSession> client;
  std::unique_ptr<TlsSession> server;
  Bytes to_client;  // plaintext each side received
  Bytes to_server;
  std::optional<TlsFailure> client_failure;
  std::optional<TlsFailure> server_failure;

  // Moves ciphertext both ways, `chunk` bytes per feed, until neither side
  // has anything to say (bounded: a stuck exchange stops after that many rounds).
  void pump(std::size_t chunk, int max_rounds = 100000) {
    for (int round = 0; round < max_rounds; ++round) {
      const bool a = carry(*client, *server, to_server, server_failure, chunk);
      const bool b = carry(*server, *client, to_client, client_failure, chunk);
      if ((!a && !b) || client_failure || server_failure) return;
    }
    ADD_FAILURE() << "the exchange did not settle";
  }

 private:
  static bool carry(TlsSession& from, TlsSession& to, Bytes& received, std::optional<TlsFailure>& failed,
                    std::size_t chunk) {
    const Bytes out = from.take_output();
    for (std::size_t at = 0; at < out.size() && !failed; at += chunk) {
      const std::size_t n = std::min(chunk, out.size() - at);
      auto fed = to.feed(ByteView(out).subspan(at, n));
      if (!fed) {
        failed = fed.error();
        break;
      }
      received.insert(received.end(), fed->plaintext.begin(), fed->plaintext.end());
    }
    return !out.empty();
  }
};

class TlsSessionTest : public ::testing::Test {
 protected:
  Pair connect(const TlsFiles& client_files, const KeyPair& server_cert, const std::string& name,
               const std::string& client_ca = "") {
    auto client_ctx = TlsContext::client(client_files);
    EXPECT_TRUE(client_ctx.has_value()) << client_ctx.error();
    auto server_ctx = TlsContext::server(server_cert.cert, server_cert.key, client_ca);
    EXPECT_TRUE(server_ctx.has_value()) << server_ctx.error();
    Pair p;
    p.client = std::make_unique<TlsSession>(*client_ctx, TlsSession::Role::kClient, name, true);
    p.server = std::make_unique<TlsSession>(*server_ctx, TlsSession::Role::kServer, "", false);
    EXPECT_TRUE(p.client->start().has_value());
    EXPECT_TRUE(p.server->start().has_value());
    return p;
  }
  TlsFiles trusting_ca() const { return TlsFiles{pki_.ca_file, "", ""}; }

  test::TestPki pki_;
};

TEST_F(TlsSessionTest, HandshakeByteByByteThenQueuedWriteArrives) {
  Pair p = connect(trusting_ca(), pki_.broker, "localhost");
  // Written before the handshake: held back, then sent encrypted.
  ASSERT_TRUE(p.client->write(pattern(1000, 1)).has_value());
  EXPECT_EQ(p.client->queued_plaintext_bytes(), 1000u);
  p.pump(1);
  ASSERT_FALSE(p.client_failure) << p.client_failure->reason;
  ASSERT_FALSE(p.server_failure) << p.server_failure->reason;
  EXPECT_TRUE(p.client->handshake_done());
  EXPECT_EQ(p.client->queued_plaintext_bytes(), 0u);
  EXPECT_EQ(p.to_server, pattern(1000, 1));
  EXPECT_GE(p.client->protocol(), std::string("TLSv1.2"));
}

TEST_F(TlsSessionTest, OneMebibyteEachWayAcrossManyRecords) {
  Pair p = connect(trusting_ca(), pki_.broker, "127.0.0.1");
  p.pump(4096);
  ASSERT_TRUE(p.client->handshake_done());
  const Bytes up = pattern(1 << 20, 2);
  const Bytes down = pattern(1 << 20, 3);
  // One 1 MiB write (64 records of 16 KiB) and many odd-sized ones.
  ASSERT_TRUE(p.client->write(up).has_value());
  for (std::size_t at = 0; at < down.size(); at += 10007) {
    const std::size_t n = std::min<std::size_t>(10007, down.size() - at);
    ASSERT_TRUE(p.server->write(Bytes(down.begin() + at, down.begin() + at + n)).has_value());
  }
  // 1500-byte feeds: many records span two feeds, and one feed holds many.
  p.pump(1500);
  ASSERT_FALSE(p.client_failure) << p.client_failure->reason;
  ASSERT_FALSE(p.server_failure) << p.server_failure->reason;
  EXPECT_EQ(p.to_server, up);
  EXPECT_EQ(p.to_client, down);
}

TEST_F(TlsSessionTest, WholeResponseInOneFeedIsReadPastSixteenKibRecords) {
  Pair p = connect(trusting_ca(), pki_.broker, "localhost");
  p.pump(65536);
  const Bytes down = pattern(300000, 4);
  ASSERT_TRUE(p.server->write(down).has_value());
  const Bytes ciphertext = p.server->take_output();
  auto fed = p.client->feed(ciphertext);
  ASSERT_TRUE(fed.has_value()) << fed.error().reason;
  EXPECT_EQ(fed->plaintext, down);
}

// The sink names where each record lands, in spans smaller than a record
// (OpenSSL keeps the rest of it for the next span), and a sink that stops
// leaves the ciphertext unread to the next feed, which may bring nothing new.
TEST_F(TlsSessionTest, SinkSpansTakePiecesOfRecordsAndAStoppedSinkResumesNextFeed) {
  Pair p = connect(trusting_ca(), pki_.broker, "localhost");
  p.pump(65536);
  ASSERT_TRUE(p.client->handshake_done());
  const Bytes up = pattern(100000, 5);
  ASSERT_TRUE(p.client->write(up).has_value());
  const Bytes ciphertext = p.client->take_output();

  Bytes got(up.size());
  std::size_t used = 0;
  int calls = 0;
  int stop_after = 3;
  const TlsSession::PlaintextSink sink{
      [&] { return std::span<std::uint8_t>(got).subspan(used, std::min<std::size_t>(1000, got.size() - used)); },
      [&](std::size_t n) {
        EXPECT_LE(n, 1000u);
        used += n;
        ++calls;
        return calls != stop_after;
      }};
  auto first = p.server->feed(ciphertext, sink);
  ASSERT_TRUE(first.has_value()) << first.error().reason;
  EXPECT_FALSE(*first);
  EXPECT_EQ(used, 3000u);  // stopped after the third span
  stop_after = -1;
  auto rest = p.server->feed(ByteView(), sink);  // the kept ciphertext, nothing new
  ASSERT_TRUE(rest.has_value()) << rest.error().reason;
  EXPECT_EQ(used, up.size());
  EXPECT_EQ(got, up);
}

// A session holds ciphertext across feeds only while a record is incomplete:
// a record cut at every byte still arrives whole and once.
TEST_F(TlsSessionTest, RecordSplitAcrossFeedsArrivesOnceThroughTheSink) {
  Pair p = connect(trusting_ca(), pki_.broker, "localhost");
  p.pump(65536);
  const Bytes down = pattern(20000, 6);
  ASSERT_TRUE(p.server->write(down).has_value());
  const Bytes ciphertext = p.server->take_output();
  Bytes got;
  std::array<std::uint8_t, 16384> room{};
  const TlsSession::PlaintextSink sink{[&] { return std::span<std::uint8_t>(room); },
                                       [&](std::size_t n) {
                                         got.insert(got.end(), room.begin(), room.begin() + static_cast<long>(n));
                                         return true;
                                       }};
  for (std::size_t at = 0; at < ciphertext.size(); ++at) {
    auto fed = p.client->feed(ByteView(ciphertext).subspan(at, 1), sink);
    ASSERT_TRUE(fed.has_value()) << fed.error().reason;
  }
  EXPECT_EQ(got, down);
}

TEST_F(TlsSessionTest, UntrustedCertificateIsACertificateFailure) {
  Pair p = connect(TlsFiles{pki_.other_ca_file, "", ""}, pki_.broker, "localhost");
  p.pump(65536);
  ASSERT_TRUE(p.client_failure.has_value());
  EXPECT_EQ(p.client_failure->kind, TlsFailureKind::kCertificate);
  EXPECT_NE(p.client_failure->reason.find("unable to get local issuer certificate"), std::string::npos)
      << p.client_failure->reason;
  EXPECT_EQ(metric_reason(p.client_failure->kind), "tls_certificate");
}

TEST_F(TlsSessionTest, ExpiredCertificateSaysExpired) {
  Pair p = connect(trusting_ca(), pki_.expired, "localhost");
  p.pump(65536);
  ASSERT_TRUE(p.client_failure.has_value());
  EXPECT_EQ(p.client_failure->kind, TlsFailureKind::kCertificate);
  EXPECT_NE(p.client_failure->reason.find("expired"), std::string::npos) << p.client_failure->reason;
}

TEST_F(TlsSessionTest, OtherHostNameIsAHostnameFailureUnlessVerificationIsOff) {
  Pair p = connect(trusting_ca(), pki_.other_host, "localhost");
  p.pump(65536);
  ASSERT_TRUE(p.client_failure.has_value());
  EXPECT_EQ(p.client_failure->kind, TlsFailureKind::kHostname);
  EXPECT_EQ(metric_reason(p.client_failure->kind), "tls_hostname");

  auto client_ctx = TlsContext::client(trusting_ca());
  auto server_ctx = TlsContext::server(pki_.other_host.cert, pki_.other_host.key);
  ASSERT_TRUE(client_ctx && server_ctx);
  Pair lax;
  lax.client = std::make_unique<TlsSession>(*client_ctx, TlsSession::Role::kClient, "localhost", false);
  lax.server = std::make_unique<TlsSession>(*server_ctx, TlsSession::Role::kServer, "", false);
  ASSERT_TRUE(lax.client->start() && lax.server->start());
  lax.pump(65536);
  EXPECT_FALSE(lax.client_failure);
  EXPECT_TRUE(lax.client->handshake_done());
}

TEST_F(TlsSessionTest, MutualTlsWithAndWithoutAClientCertificate) {
  Pair with =
      connect(TlsFiles{pki_.ca_file, pki_.client.cert, pki_.client.key}, pki_.broker, "localhost", pki_.ca_file);
  ASSERT_TRUE(with.client->write(pattern(100, 5)).has_value());
  with.pump(65536);
  ASSERT_FALSE(with.client_failure) << with.client_failure->reason;
  ASSERT_FALSE(with.server_failure) << with.server_failure->reason;
  EXPECT_EQ(with.to_server, pattern(100, 5));

  Pair without = connect(trusting_ca(), pki_.broker, "localhost", pki_.ca_file);
  ASSERT_TRUE(without.client->write(pattern(100, 5)).has_value());
  without.pump(65536);
  // The server refuses; the client learns it from the alert.
  ASSERT_TRUE(without.server_failure.has_value());
  without.pump(65536);
  EXPECT_TRUE(without.to_server.empty());
}

// The listener's side: the server names a verified client by its
// certificate's subject CN; a required certificate that is missing is its
// own failure kind; a requested one may be missing.
TEST_F(TlsSessionTest, ServerNamesAVerifiedClientByItsCommonName) {
  Pair with =
      connect(TlsFiles{pki_.ca_file, pki_.client.cert, pki_.client.key}, pki_.broker, "localhost", pki_.ca_file);
  with.pump(7);
  ASSERT_FALSE(with.server_failure) << with.server_failure->reason;
  ASSERT_TRUE(with.server->handshake_done());
  EXPECT_EQ(with.server->peer_common_name(), std::optional<std::string>("produce-proxy client"));
  EXPECT_FALSE(with.server->session_reused());

  Pair without = connect(trusting_ca(), pki_.broker, "localhost", pki_.ca_file);
  without.pump(65536);
  ASSERT_TRUE(without.server_failure.has_value());
  EXPECT_EQ(without.server_failure->kind, TlsFailureKind::kNoPeerCertificate);
  EXPECT_EQ(metric_reason(without.server_failure->kind), "tls_no_certificate");
}

TEST_F(TlsSessionTest, RequestedClientCertificateMayBeMissingButNotUntrusted) {
  auto server_ctx = TlsContext::server(
      TlsServerFiles{pki_.broker.cert, pki_.broker.key, pki_.ca_file, ClientCertificates::kRequested});
  ASSERT_TRUE(server_ctx.has_value()) << server_ctx.error();
  auto run = [&](const TlsFiles& client_files) {
    Pair p;
    p.client =
        std::make_unique<TlsSession>(*TlsContext::client(client_files), TlsSession::Role::kClient, "localhost", true);
    p.server = std::make_unique<TlsSession>(*server_ctx, TlsSession::Role::kServer, "", false);
    EXPECT_TRUE(p.client->start().has_value());
    p.pump(65536);
    return p;
  };
  Pair anonymous = run(trusting_ca());
  ASSERT_FALSE(anonymous.server_failure) << anonymous.server_failure->reason;
  EXPECT_TRUE(anonymous.server->handshake_done());
  EXPECT_EQ(anonymous.server->peer_common_name(), std::nullopt);

  // A client certificate from an unrelated CA: chains to nothing trusted.
  test::TestPki other;
  Pair untrusted = run(TlsFiles{pki_.ca_file, other.client.cert, other.client.key});
  ASSERT_TRUE(untrusted.server_failure.has_value());
  EXPECT_EQ(untrusted.server_failure->kind, TlsFailureKind::kCertificate);
}

TEST(TlsContext, ServerFilesThatDoNotLoadAreNamed) {
  test::TestPki pki;
  auto mismatched = TlsContext::server(TlsServerFiles{pki.broker.cert, pki.client.key, "", ClientCertificates::kNone});
  ASSERT_FALSE(mismatched.has_value());
  EXPECT_NE(mismatched.error().find("mismatch"), std::string::npos) << mismatched.error();
  auto no_ca = TlsContext::server(TlsServerFiles{pki.broker.cert, pki.broker.key, "", ClientCertificates::kRequired});
  ASSERT_FALSE(no_ca.has_value());
  EXPECT_NE(no_ca.error().find("ca_file"), std::string::npos);
}

TEST(TlsContext, FilesThatDoNotLoadAreNamedWithoutTheirContents) {
  test::TestPki pki;
  auto missing = TlsContext::client(TlsFiles{"/nonexistent/ca.pem", "", ""});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().find("/nonexistent/ca.pem"), std::string::npos);

  auto half = TlsContext::client(TlsFiles{pki.ca_file, pki.client.cert, ""});
  ASSERT_FALSE(half.has_value());
  EXPECT_NE(half.error().find("both or neither"), std::string::npos);

  auto mismatched = TlsContext::client(TlsFiles{pki.ca_file, pki.client.cert, pki.broker.key});
  ASSERT_FALSE(mismatched.has_value());
  EXPECT_NE(mismatched.error().find("mismatch"), std::string::npos) << mismatched.error();
  EXPECT_EQ(mismatched.error().find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace pp::net
