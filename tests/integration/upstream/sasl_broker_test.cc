// BrokerConnection's SASL states against a scripted broker on 127.0.0.1:
// SaslHandshake v1 then SaslAuthenticate at the highest common version; a
// KIP-368 session lifetime re-authenticates on the same socket, only once the
// outstanding requests are answered and with no Produce allowed meanwhile;
// a refused mechanism or password closes with one line and a counted reason,
// then reconnects.
#include <gtest/gtest.h>

#include <cstdlib>

#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/sasl_authenticate.h"
#include "proxy/protocol/messages/sasl_handshake.h"
#include "proxy/upstream/broker_connection.h"
#include "tests/integration/upstream/loop_fixture.h"
#include "tests/integration/upstream/scripted_broker.h"

namespace pp::upstream::test {
namespace {

using Event = BrokerConnection::Event;

class SaslBroker : public LoopTest {
 protected:
  void TearDown() override {
    connection_.reset();
    broker_.reset();
    deferred_.reset();
  }

  // Answers ApiVersions (with SaslHandshake v0-v1, SaslAuthenticate v0-v2),
  // then whatever `on_sasl` or `on_other` script.
  void start_broker(std::function<void(ScriptedBroker&, const ScriptedBroker::Request&)> on_other = nullptr) {
    broker_ = std::make_unique<ScriptedBroker>(
        &loop_,
        [this, on_other](ScriptedBroker& b, const ScriptedBroker::Request& r) {
          if (r.header.api_key == ApiKey::kApiVersions) {
            ApiVersionsResponse v = ScriptedBroker::default_api_versions();
            v.api_keys.push_back({17, 0, 1, {}});
            v.api_keys.push_back({36, 0, 2, {}});
            b.respond(r, v);
          } else if (r.header.api_key == ApiKey::kSaslHandshake) {
            SaslHandshakeResponse h;
            h.error_code = handshake_error_;
            h.mechanisms = {"PLAIN", "SCRAM-SHA-512"};
            b.respond(r, h);
          } else if (r.header.api_key == ApiKey::kSaslAuthenticate) {
            authenticate_versions_.push_back(r.header.api_version);
            SaslAuthenticateResponse a;
            a.error_code = authenticate_error_;
            a.error_message = authenticate_error_ == ErrorCode::kNone
                                  ? std::nullopt
                                  : std::optional<std::string>("Authentication failed: Invalid username or password");
            a.session_lifetime_ms = session_lifetime_ms_;
            b.respond(r, a);
          } else if (on_other) {
            on_other(b, r);
          }
        },
        /*answer_api_versions=*/false);
  }

  void connect() {
    ::setenv("PP_SASL_BROKER_TEST_PASSWORD", "pw-not-logged", 1);
    auto sasl = sasl::Authenticator::create(
        sasl::SaslConfig{"PLAIN", "proxy", "", "PP_SASL_BROKER_TEST_PASSWORD", "", {}, 60000});
    ASSERT_TRUE(sasl) << sasl.error();
    BrokerConnectionOptions options;
    options.request_timeout_ms = 3000;
    options.reconnect_backoff_ms = 20;
    options.reconnect_backoff_max_ms = 100;
    options.sasl = *sasl;
    options.on_auth_failure = [this](const BrokerConnection& c, std::string_view reason) {
      failures_.emplace_back(c.node_id(), std::string(reason));
    };
    options.on_reauthenticated = [this](std::int32_t) { ++reauthenticated_; };
    connection_ = std::make_unique<BrokerConnection>(&loop_, *deferred_, 7, broker_->address(), options,
                                                     [this](BrokerConnection&, Event e) { events_.push_back(e); });
    connection_->connect();
  }

  std::size_t ready_events() const {
    return static_cast<std::size_t>(std::count(events_.begin(), events_.end(), Event::kReady));
  }

  std::unique_ptr<net::Deferred> deferred_ = std::make_unique<net::Deferred>(&loop_);
  std::unique_ptr<ScriptedBroker> broker_;
  std::unique_ptr<BrokerConnection> connection_;
  std::vector<Event> events_;
  std::vector<std::pair<std::int32_t, std::string>> failures_;
  std::vector<std::int16_t> authenticate_versions_;
  int reauthenticated_ = 0;
  ErrorCode handshake_error_ = ErrorCode::kNone;
  ErrorCode authenticate_error_ = ErrorCode::kNone;
  std::int64_t session_lifetime_ms_ = 0;
};

TEST_F(SaslBroker, AuthenticatesBeforeReady) {
  start_broker();
  connect();
  ASSERT_TRUE(run_until([&] { return connection_->ready(); }, 3000));
  EXPECT_EQ(broker_->count(ApiKey::kSaslHandshake), 1U);
  EXPECT_EQ(authenticate_versions_, std::vector<std::int16_t>{2});
  // ApiVersions, SaslHandshake, SaslAuthenticate: nothing else before ready.
  ASSERT_EQ(broker_->requests().size(), 3U);
  EXPECT_EQ(broker_->requests()[1].header.api_version, 1);
  EXPECT_TRUE(connection_->can_send_produce());
  EXPECT_TRUE(failures_.empty());
  for (const auto& line : capture_->lines()) EXPECT_EQ(line.find("pw-not-logged"), std::string::npos) << line;
  EXPECT_TRUE(capture_->contains("authenticated with SASL PLAIN"));
}

TEST_F(SaslBroker, ReauthenticatesOnTheSameSocketBeforeTheSessionEnds) {
  session_lifetime_ms_ = 300;
  start_broker();
  connect();
  // Each re-authentication ends with the node ready again (an event on a later iteration).
  ASSERT_TRUE(run_until([&] { return reauthenticated_ >= 2 && ready_events() >= 3; }, 5000));
  EXPECT_EQ(broker_->accepted(), 1);
  EXPECT_GE(connection_->reauthentications(), 2U);
  EXPECT_GE(broker_->count(ApiKey::kSaslHandshake), 3U);
  EXPECT_TRUE(failures_.empty());
  EXPECT_TRUE(capture_->contains("re-authenticated with SASL PLAIN"));
}

TEST_F(SaslBroker, ReauthenticationWaitsForOutstandingRequestsAndHoldsProduce) {
  session_lifetime_ms_ = 200;
  std::optional<ScriptedBroker::Request> held;
  start_broker([&](ScriptedBroker&, const ScriptedBroker::Request& r) { held = r; });
  connect();
  ASSERT_TRUE(run_until([&] { return connection_->ready(); }, 3000));
  int answered = 0;
  connection_->send(MetadataRequest{}, 1, make_sink<MetadataResponse>([&](auto r) { answered += r ? 1 : -100; }));
  ASSERT_TRUE(run_until([&] { return connection_->reauthenticating(); }, 3000));
  run_for(200);
  // Due, but the Metadata request is still outstanding: no handshake yet, and no Produce.
  EXPECT_EQ(broker_->count(ApiKey::kSaslHandshake), 1U);
  EXPECT_FALSE(connection_->can_send_produce());
  EXPECT_TRUE(connection_->ready());
  ASSERT_TRUE(held);
  broker_->respond(*held, MetadataResponse{});
  ASSERT_TRUE(run_until([&] { return reauthenticated_ >= 1 && connection_->ready(); }, 3000));
  EXPECT_EQ(answered, 1);
  EXPECT_EQ(broker_->accepted(), 1);
  EXPECT_GE(broker_->count(ApiKey::kSaslHandshake), 2U);
}

TEST_F(SaslBroker, WrongPasswordIsOneLineACountedReasonAndAReconnect) {
  authenticate_error_ = ErrorCode::kSaslAuthenticationFailed;
  start_broker();
  connect();
  ASSERT_TRUE(run_until([&] { return failures_.size() >= 2; }, 5000));
  EXPECT_FALSE(connection_->ready());
  EXPECT_GE(broker_->accepted(), 2);
  EXPECT_EQ(failures_.front(), (std::pair<std::int32_t, std::string>{7, "sasl_authentication"}));
  EXPECT_EQ(capture_->count("error: broker 7 (127.0.0.1:" + std::to_string(broker_->port()) +
                            "): disconnected while authenticating: SASL PLAIN authentication failed "
                            "(sasl_authentication): SaslAuthenticate answered SASL_AUTHENTICATION_FAILED: "
                            "Authentication failed: Invalid username or password"),
            1U);  // the next ones within 10 s are held back to debug
  for (const auto& line : capture_->lines()) EXPECT_EQ(line.find("pw-not-logged"), std::string::npos) << line;
}

TEST_F(SaslBroker, RefusedMechanismNamesWhatTheBrokerEnables) {
  handshake_error_ = ErrorCode::kUnsupportedSaslMechanism;
  start_broker();
  connect();
  ASSERT_TRUE(run_until([&] { return !failures_.empty(); }, 3000));
  EXPECT_EQ(failures_.front().second, "sasl_mechanism");
  EXPECT_TRUE(
      capture_->contains("SaslHandshake answered UNSUPPORTED_SASL_MECHANISM for PLAIN (the broker enables "
                         "[PLAIN,SCRAM-SHA-512])"));
  EXPECT_EQ(broker_->count(ApiKey::kSaslAuthenticate), 0U);
}

}  // namespace
}  // namespace pp::upstream::test
