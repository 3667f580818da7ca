// BrokerConnection over TLS against the scripted broker speaking TLS on
// 127.0.0.1: negotiation and requests as over plaintext, and the failures an
// operator must see: an untrusted certificate (counted, reconnected with
// backoff, never ready), and a peer that accepts but never answers the
// ClientHello (the handshake counts against the connect timeout).
#include <gtest/gtest.h>

#include <optional>

#include "proxy/protocol/messages/metadata.h"
#include "proxy/upstream/broker_connection.h"
#include "tests/integration/upstream/loop_fixture.h"
#include "tests/integration/upstream/scripted_broker.h"
#include "tests/support/test_pki.h"

namespace pp::upstream::test {
namespace {

using MetadataResult = std::expected<MetadataResponse, ErrorCode>;

class TlsBroker : public LoopTest {
 protected:
  void TearDown() override {
    connection_.reset();
    broker_.reset();
    deferred_.reset();
  }

  void start_broker(const pp::test::KeyPair& cert, ScriptedBroker::Handler handler = nullptr,
                    const std::string& client_ca = "") {
    auto context = net::TlsContext::server(cert.cert, cert.key, client_ca);
    ASSERT_TRUE(context.has_value()) << context.error();
    broker_ = std::make_unique<ScriptedBroker>(&loop_, std::move(handler), true, *context);
  }

  void connect(const std::string& ca_file, int connect_timeout_ms = 10000) {
    auto context = net::TlsContext::client(net::TlsFiles{ca_file, "", ""});
    ASSERT_TRUE(context.has_value()) << context.error();
    BrokerConnectionOptions options;
    options.reconnect_backoff_ms = 20;
    options.reconnect_backoff_max_ms = 100;
    options.connect_timeout_ms = connect_timeout_ms;
    options.security = TransportSecurity{*context, "", true};
    options.on_auth_failure = [this](const BrokerConnection& c, std::string_view reason) {
      EXPECT_EQ(c.node_id(), 7);
      failures_.emplace_back(reason);
    };
    connection_ = std::make_unique<BrokerConnection>(&loop_, *deferred_, 7, broker_->address(), options,
                                                     [](BrokerConnection&, BrokerConnection::Event) {});
    connection_->connect();
  }

  pp::test::TestPki pki_;
  std::unique_ptr<net::Deferred> deferred_ = std::make_unique<net::Deferred>(&loop_);
  std::unique_ptr<ScriptedBroker> broker_;
  std::unique_ptr<BrokerConnection> connection_;
  std::vector<std::string> failures_;
};

TEST_F(TlsBroker, NegotiatesAndAnswersOverTls) {
  start_broker(pki_.broker, [](ScriptedBroker& b, const auto& req) {
    MetadataResponse resp;
    resp.brokers.push_back({7, "127.0.0.1", 1, {}, {}});
    b.respond(req, resp);
  });
  connect(pki_.ca_file);
  ASSERT_TRUE(run_until([&] { return connection_->ready(); }, 5000));
  EXPECT_EQ(connection_->versions().version(ApiKey::kProduce), 9);

  std::optional<MetadataResult> result;
  connection_->send(MetadataRequest{}, 1, make_sink<MetadataResponse>([&](MetadataResult r) { result = r; }));
  ASSERT_TRUE(run_until([&] { return result.has_value(); }, 3000));
  ASSERT_TRUE(*result);
  EXPECT_EQ((*result)->brokers.size(), 1u);
  EXPECT_TRUE(failures_.empty());
}

TEST_F(TlsBroker, UntrustedCertificateIsCountedAndRetriedWithBackoff) {
  start_broker(pki_.broker);
  connect(pki_.other_ca_file);
  // Each attempt fails the same way; the backoff (20-100 ms) brings the next.
  ASSERT_TRUE(run_until([&] { return failures_.size() >= 3; }, 5000));
  EXPECT_FALSE(connection_->ready());
  EXPECT_EQ(failures_.front(), "tls_certificate");
  EXPECT_GE(broker_->accepted(), 3);
  EXPECT_TRUE(broker_->requests().empty()) << "nothing is sent before the handshake";
  // One error line (a refused authentication is a configuration problem)
  // names the broker and OpenSSL's reason; the rest go to debug.
  EXPECT_EQ(capture_->count("error: broker 7 (127.0.0.1:"), 1u);
  EXPECT_TRUE(capture_->contains("certificate verify failed"));
  EXPECT_GE(connection_->consecutive_failures(), 3);
}

TEST_F(TlsBroker, MissingClientCertificateIsAnAuthFailureNotAVersionProblem) {
  // TLS 1.3: the client's handshake is done before the broker checks the
  // (absent) client certificate; its alert comes while ApiVersions waits.
  start_broker(pki_.broker, nullptr, pki_.ca_file);
  connect(pki_.ca_file);
  ASSERT_TRUE(run_until([&] { return failures_.size() >= 2; }, 5000));
  EXPECT_EQ(failures_.front(), "tls_handshake");
  EXPECT_FALSE(connection_->ready());
  EXPECT_TRUE(broker_->requests().empty());
  EXPECT_TRUE(capture_->contains("refused after the handshake"));
  EXPECT_FALSE(capture_->contains("retrying with v0")) << "a refusal is no reason to fall back to ApiVersions v0";
}

TEST_F(TlsBroker, SilentPeerTimesTheHandshakeOut) {
  // A plaintext scripted broker never answers a ClientHello (it reads it as
  // a frame far over its bound and waits).
  broker_ = std::make_unique<ScriptedBroker>(&loop_, nullptr);
  connect(pki_.ca_file, /*connect_timeout_ms=*/300);
  ASSERT_TRUE(run_until([&] { return !failures_.empty(); }, 5000));
  EXPECT_EQ(failures_.front(), "tls_handshake");
  EXPECT_TRUE(capture_->contains("TLS handshake timed out after 300 ms"));
  EXPECT_FALSE(connection_->ready());
}

}  // namespace
}  // namespace pp::upstream::test
