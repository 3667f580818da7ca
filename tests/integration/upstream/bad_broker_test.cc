// BrokerConnection against a scripted broker on 127.0.0.1 that misbehaves:
// garbage, an oversize frame, a mismatched correlation id, an unsolicited
// answer, silence, KIP-511 and KIP-219 answers. Each time: a clear log line,
// every callback exactly once, never inside the send, and no crash.
#include <gtest/gtest.h>

#include <optional>

#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/upstream/broker_connection.h"
#include "tests/integration/upstream/loop_fixture.h"
#include "tests/integration/upstream/scripted_broker.h"

namespace pp::upstream::test {
namespace {

using Event = BrokerConnection::Event;
using MetadataResult = std::expected<MetadataResponse, ErrorCode>;

class BadBroker : public LoopTest {
 protected:
  void TearDown() override {
    connection_.reset();
    broker_.reset();
    deferred_.reset();
  }

  void start_broker(ScriptedBroker::Handler handler, bool answer_api_versions = true) {
    broker_ = std::make_unique<ScriptedBroker>(&loop_, std::move(handler), answer_api_versions);
  }

  void connect(int request_timeout_ms = 2000, net::HostPort address = {}) {
    BrokerConnectionOptions options;
    options.request_timeout_ms = request_timeout_ms;
    options.reconnect_backoff_ms = 20;
    options.reconnect_backoff_max_ms = 100;
    if (address.port == 0) address = broker_->address();
    connection_ = std::make_unique<BrokerConnection>(&loop_, *deferred_, 7, address, options,
                                                     [this](BrokerConnection&, Event e) { events_.push_back(e); });
    connection_->connect();
  }

  bool wait_ready() {
    return run_until([&] { return connection_->ready(); }, 3000);
  }

  // Sends a Metadata v1 request; its result lands in results_[index].
  std::size_t send_metadata() {
    const std::size_t index = calls_.size();
    calls_.push_back(0);
    results_.emplace_back();
    MetadataRequest request;
    connection_->send(request, 1, make_sink<MetadataResponse>([this, index](MetadataResult r) {
                        ++calls_[index];
                        results_[index] = std::move(r);
                      }));
    return index;
  }

  bool all_called() const {
    return std::all_of(calls_.begin(), calls_.end(), [](int c) { return c > 0; });
  }
  void expect_each_failed_once(ErrorCode error) {
    run_for(100);  // a second call would come by now
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      EXPECT_EQ(calls_[i], 1) << "request " << i;
      ASSERT_TRUE(results_[i].has_value());
      ASSERT_FALSE(*results_[i]) << "request " << i << " succeeded";
      EXPECT_EQ(results_[i]->error(), error) << error_name(results_[i]->error());
    }
  }

  static Bytes frame_with(std::int32_t correlation_id, std::vector<std::uint8_t> body) {
    Bytes out;
    const auto size = static_cast<std::uint32_t>(4 + body.size());
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(size >> s));
    for (int s = 24; s >= 0; s -= 8) {
      out.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(correlation_id) >> s));
    }
    out.insert(out.end(), body.begin(), body.end());
    return out;
  }

  std::unique_ptr<net::Deferred> deferred_ = std::make_unique<net::Deferred>(&loop_);
  std::unique_ptr<ScriptedBroker> broker_;
  std::unique_ptr<BrokerConnection> connection_;
  std::vector<Event> events_;
  std::vector<int> calls_;
  std::vector<std::optional<MetadataResult>> results_;
};

TEST_F(BadBroker, GoodAnswerIsDelivered) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    MetadataResponse resp;
    resp.brokers.push_back({7, "127.0.0.1", 1, {}, {}});
    b.respond(req, resp);
  });
  connect();
  ASSERT_TRUE(wait_ready());
  EXPECT_EQ(broker_->requests().front().header.api_version, 3);  // ApiVersions v3 first
  EXPECT_EQ(connection_->versions().version(ApiKey::kProduce), 9);
  send_metadata();
  EXPECT_EQ(calls_[0], 0);  // never inside the send
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  ASSERT_TRUE(*results_[0]);
  EXPECT_EQ((*results_[0])->brokers.size(), 1u);
  EXPECT_EQ(connection_->in_flight(), 0);
}

TEST_F(BadBroker, GarbageBodyClosesFailsOnceAndReconnects) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    b.send_raw(frame_with(req.header.correlation_id, {0xde, 0xad, 0xbe, 0xef, 0xff}));
  });
  connect();
  ASSERT_TRUE(wait_ready());
  send_metadata();
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  expect_each_failed_once(ErrorCode::kNetworkException);
  EXPECT_TRUE(capture_->contains("error: broker 7 (127.0.0.1:"));
  EXPECT_TRUE(capture_->contains("undecodable Metadata v1 (correlation id 1) response"));
  ASSERT_TRUE(run_until([&] { return broker_->accepted() == 2 && connection_->ready(); }, 3000));
}

TEST_F(BadBroker, OversizeFrameClosesAndFailsEveryOutstandingRequest) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    if (req.header.correlation_id == 2) b.send_raw(Bytes{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1});
  });
  connect();
  ASSERT_TRUE(wait_ready());
  send_metadata();
  send_metadata();
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  expect_each_failed_once(ErrorCode::kNetworkException);
  EXPECT_TRUE(capture_->contains("bad response frame: field 'frame_size'"));
  EXPECT_TRUE(capture_->contains("over the configured size limit (bound 104857600 bytes)"));
  EXPECT_TRUE(capture_->contains("2 outstanding requests failed"));
}

TEST_F(BadBroker, MismatchedCorrelationIdIsAProtocolError) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    if (req.header.correlation_id == 2) b.respond(req, MetadataResponse{});  // answers the 2nd first
  });
  connect();
  ASSERT_TRUE(wait_ready());
  send_metadata();
  send_metadata();
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  expect_each_failed_once(ErrorCode::kNetworkException);
  EXPECT_TRUE(
      capture_->contains("response correlation id 2 does not match the oldest outstanding request, Metadata v1 "
                         "(correlation id 1)"));
}

TEST_F(BadBroker, UnsolicitedAnswerClosesTheConnection) {
  start_broker(nullptr);
  connect();
  ASSERT_TRUE(wait_ready());
  broker_->send_raw(frame_with(99, {0, 0, 0, 0}));
  ASSERT_TRUE(run_until([&] { return capture_->contains("with no request outstanding"); }, 2000));
  ASSERT_TRUE(run_until([&] { return broker_->accepted() == 2 && connection_->ready(); }, 3000));
}

TEST_F(BadBroker, SilenceTimesOutTheOldestAndFailsTheRest) {
  start_broker(nullptr);
  connect(/*request_timeout_ms=*/200);
  ASSERT_TRUE(wait_ready());
  send_metadata();
  run_for(50);
  send_metadata();
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  run_for(100);
  EXPECT_EQ(calls_, (std::vector<int>{1, 1}));
  EXPECT_EQ(results_[0]->error(), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(results_[1]->error(), ErrorCode::kNetworkException);  // its own deadline hadn't come
  EXPECT_TRUE(capture_->contains("Metadata v1 (correlation id 1) timed out after 200 ms"));
}

TEST_F(BadBroker, BrokerClosingFailsOutstandingOnce) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    if (req.header.correlation_id == 3) b.close_connections();
  });
  connect();
  ASSERT_TRUE(wait_ready());
  for (int i = 0; i < 3; ++i) send_metadata();
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  expect_each_failed_once(ErrorCode::kNetworkException);
  EXPECT_NE(std::find(events_.begin(), events_.end(), Event::kDisconnected), events_.end());
}

TEST_F(BadBroker, SendBeforeReadyFailsLaterNotInline) {
  start_broker(nullptr);
  connect();
  send_metadata();  // still connecting
  EXPECT_EQ(calls_[0], 0);
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  expect_each_failed_once(ErrorCode::kNetworkException);
}

TEST_F(BadBroker, GarbageApiVersionsFallsBackToV0ThenBacksOff) {
  start_broker(
      [](ScriptedBroker& b, const auto& req) {
        b.send_raw(frame_with(req.header.correlation_id, {1, 2, 3}));
      },
      /*answer_api_versions=*/false);
  connect();
  ASSERT_TRUE(run_until([&] { return broker_->accepted() >= 4; }, 3000));
  EXPECT_FALSE(connection_->ready());
  ASSERT_GE(broker_->requests().size(), 2u);
  EXPECT_EQ(broker_->requests()[0].header.api_version, 3);
  EXPECT_EQ(broker_->requests()[1].header.api_version, 0);
  EXPECT_TRUE(capture_->contains("ApiVersions v3 failed"));
  EXPECT_TRUE(capture_->contains("retrying with v0"));
  // One error line, then the rate limit keeps the rest at debug.
  EXPECT_EQ(capture_->count("error: broker 7"), 1u);
  EXPECT_GE(capture_->count("debug: broker 7 (127.0.0.1:" + std::to_string(broker_->port()) +
                            "): disconnected while negotiating"),
            1u);
}

TEST_F(BadBroker, Kip511UnsupportedVersionRetriesLowerOnTheSameConnection) {
  start_broker(
      [](ScriptedBroker& b, const auto& req) {
        if (req.header.api_key != ApiKey::kApiVersions) return;
        ApiVersionsResponse resp = ScriptedBroker::default_api_versions();
        if (req.header.api_version > 1) {
          resp.error_code = ErrorCode::kUnsupportedVersion;
          resp.api_keys = {{18, 0, 1, {}}};
          b.respond(req, resp, 0);  // KIP-511: the v0 layout
        } else {
          b.respond(req, resp);
        }
      },
      /*answer_api_versions=*/false);
  connect();
  ASSERT_TRUE(wait_ready());
  EXPECT_EQ(broker_->accepted(), 1);
  ASSERT_EQ(broker_->requests().size(), 2u);
  EXPECT_EQ(broker_->requests()[1].header.api_version, 1);
  EXPECT_EQ(connection_->versions().version(ApiKey::kMetadata), 12);
}

TEST_F(BadBroker, V0FallbackLastsOneSessionWhenTheBrokerListsV3) {
  int api_versions_seen = 0;
  start_broker(
      [&api_versions_seen](ScriptedBroker& b, const auto& req) {
        if (req.header.api_key != ApiKey::kApiVersions) return;
        if (++api_versions_seen == 1) {
          b.close_connections();  // cut mid-negotiation, as a restarting broker does
          return;
        }
        b.respond(req, ScriptedBroker::default_api_versions());
      },
      /*answer_api_versions=*/false);
  connect();
  ASSERT_TRUE(wait_ready());
  ASSERT_EQ(broker_->count(ApiKey::kApiVersions), 2u);
  EXPECT_EQ(broker_->requests()[1].header.api_version, 0);  // the fallback, for this session
  broker_->close_connections();                             // the broker goes away and comes back
  ASSERT_TRUE(run_until([&] { return broker_->count(ApiKey::kApiVersions) >= 3 && connection_->ready(); }, 3000));
  EXPECT_EQ(broker_->requests()[2].header.api_version, 3) << "a broker that lists v3 is asked v3 again";
}

TEST_F(BadBroker, Kip219ThrottleHoldsRequestsBack) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    if (req.header.api_key == ApiKey::kProduce) {
      ProduceResponse resp;
      resp.throttle_time_ms = 300;
      b.respond(req, resp);
    } else {
      b.respond(req, MetadataResponse{});
    }
  });
  connect();
  ASSERT_TRUE(wait_ready());
  ASSERT_TRUE(connection_->can_send_produce());
  ProduceRequest produce;
  produce.acks = -1;
  std::optional<std::expected<ProduceResponse, ErrorCode>> produced;
  connection_->send(produce, 7, make_sink<ProduceResponse>([&](auto r) { produced = std::move(r); }));
  ASSERT_TRUE(run_until([&] { return produced.has_value(); }, 2000));
  ASSERT_TRUE(*produced);
  EXPECT_TRUE(connection_->throttled());
  EXPECT_FALSE(connection_->can_send_produce());
  send_metadata();  // held back, not written
  run_for(100);
  EXPECT_EQ(broker_->count(ApiKey::kMetadata), 0u);
  ASSERT_TRUE(run_until([&] { return all_called(); }, 2000));
  EXPECT_EQ(broker_->count(ApiKey::kMetadata), 1u);
  EXPECT_TRUE(connection_->can_send_produce());
  EXPECT_NE(std::find(events_.begin(), events_.end(), Event::kThrottleEnded), events_.end());
}

TEST_F(BadBroker, AThrottleLongerThanTheRequestTimeoutIsCappedAtIt) {
  start_broker([](ScriptedBroker& b, const auto& req) {
    if (req.header.api_key == ApiKey::kProduce) {
      ProduceResponse resp;
      resp.throttle_time_ms = INT32_MAX;  // 24 days
      b.respond(req, resp);
    } else {
      b.respond(req, MetadataResponse{});
    }
  });
  connect(/*request_timeout_ms=*/300);
  ASSERT_TRUE(wait_ready());
  std::optional<std::expected<ProduceResponse, ErrorCode>> produced;
  ProduceRequest produce;
  produce.acks = -1;
  connection_->send(produce, 7, make_sink<ProduceResponse>([&](auto r) { produced = std::move(r); }));
  ASSERT_TRUE(run_until([&] { return produced.has_value(); }, 2000));
  EXPECT_TRUE(connection_->throttled());
  ASSERT_TRUE(run_until([&] { return connection_->can_send_produce(); }, 3000)) << "held no longer than 300 ms";
  EXPECT_EQ(capture_->count("capped at request_timeout_ms"), 1u);
}

TEST_F(BadBroker, RefusedConnectionsWarnOncePerTenSeconds) {
  start_broker(nullptr);
  const net::HostPort address = broker_->address();
  broker_->stop();  // nothing listens there any more
  connect(2000, address);
  ASSERT_TRUE(run_until([&] { return connection_->consecutive_failures() >= 4; }, 3000));
  EXPECT_EQ(capture_->count("warning: broker 7"), 1u);
  EXPECT_GE(
      capture_->count("debug: broker 7 (" + address.to_string() + "): disconnected while connecting: connect failed"),
      3u);
}

}  // namespace
}  // namespace pp::upstream::test
