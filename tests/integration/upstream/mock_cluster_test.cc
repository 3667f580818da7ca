// Upstream against librdkafka's mock cluster (3 brokers): an independent
// broker that speaks only old versions (Produce <= v7, Metadata <= v2, no
// leader epochs) and closes on versions it doesn't know.
#include "daemon/mock_cluster.h"

#include <gtest/gtest.h>

#include <map>

#include "proxy/records/record_batch_builder.h"
#include "proxy/upstream/upstream.h"
#include "tests/integration/upstream/loop_fixture.h"

namespace pp::upstream::test {
namespace {

using pp::MockCluster;

class UpstreamOnMock : public LoopTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(mock_.create_topic("t", 6));
    for (std::int32_t p = 0; p < 6; ++p) ASSERT_TRUE(mock_.set_leader("t", p, 1 + p % 3));
  }
  void TearDown() override { upstream_.reset(); }

  void start(int request_timeout_ms = 5000) {
    UpstreamConfig config;
    config.bootstrap_servers = mock_.bootstrap_list();
    config.request_timeout_ms = request_timeout_ms;
    upstream_ = std::make_unique<Upstream>(&loop_, config, [this](const MetadataUpdate& u) {
      ++updates_;
      for (const auto& [name, leadership] : u.topics) last_[name] = leadership;
    });
    ASSERT_TRUE(upstream_->start());
  }

  // Asks for "t" and waits for an answer that shows it.
  bool refresh() {
    const int before = updates_;
    upstream_->request_metadata({"t"});
    return run_until([&] { return updates_ > before && last_.contains("t"); }, 5000);
  }

  std::int32_t leader_of(std::int32_t partition) {
    return last_["t"].partitions.at(static_cast<std::size_t>(partition)).leader_id;
  }

  bool wait_sendable(std::int32_t node, std::uint64_t timeout_ms = 5000) {
    return run_until([&] { return upstream_->can_send_produce(node); }, timeout_ms);
  }

  static Bytes batch(int records) {
    RecordBatchBuilder builder;  // producer id -1: no idempotence on the mock
    for (int i = 0; i < records; ++i) {
      const std::string value = "v" + std::to_string(i);
      builder.append(1'700'000'000'000 + i, std::nullopt,
                     ByteView(reinterpret_cast<const std::uint8_t*>(value.data()), value.size()));
    }
    return builder.build();
  }

  static ProduceRequest produce(const Bytes& records, std::int32_t partition) {
    ProduceRequest r;
    r.acks = -1;
    r.timeout_ms = 5000;
    ProduceTopicData t;
    t.name = "t";
    ProducePartitionData p;
    p.index = partition;
    p.records.data = ByteView(records);
    t.partition_data.push_back(p);
    r.topic_data.push_back(t);
    return r;
  }

  MockCluster mock_{3};
  std::unique_ptr<Upstream> upstream_;
  int updates_ = 0;
  std::map<std::string, TopicLeadership> last_;
};

TEST_F(UpstreamOnMock, NegotiatesDownToTheMocksVersions) {
  start();
  ASSERT_TRUE(refresh());
  ASSERT_TRUE(wait_sendable(1));
  EXPECT_EQ(upstream_->produce_version(1), 7);
  EXPECT_EQ(upstream_->negotiated_version(1, ApiKey::kMetadata), 2);
  EXPECT_EQ(upstream_->negotiated_version(1, ApiKey::kInitProducerId), 4);
  EXPECT_EQ(upstream_->negotiated_version(1, ApiKey::kApiVersions), 2);
  // The mock can't parse our ApiVersions v3 answer path: we fell back to v0.
  EXPECT_TRUE(capture_->contains("retrying with v0"));
  EXPECT_TRUE(capture_->contains("ready (ApiVersions v0): Produce v7, Metadata v2"));
}

TEST_F(UpstreamOnMock, MetadataForATopic) {
  start();
  ASSERT_TRUE(refresh());
  const TopicLeadership& t = last_["t"];
  EXPECT_EQ(t.error, ErrorCode::kNone);
  EXPECT_TRUE(t.topic_id.is_zero());  // Metadata v2 has no topic ids
  ASSERT_EQ(t.partitions.size(), 6u);
  for (std::int32_t p = 0; p < 6; ++p) {
    EXPECT_EQ(t.partitions[static_cast<std::size_t>(p)].leader_id, 1 + p % 3);
    EXPECT_EQ(t.partitions[static_cast<std::size_t>(p)].leader_epoch, -1);  // no epochs below v7
  }
  EXPECT_EQ(upstream_->brokers().all().size(), 3u);
  EXPECT_EQ(upstream_->topics_in_use().count("t"), 1u);
}

TEST_F(UpstreamOnMock, RequestsInOneIterationBecomeOneMetadataRequest) {
  start();
  ASSERT_TRUE(refresh());
  run_for(150);  // past the refresh spacing
  const auto before = upstream_->metadata_requests_sent();
  for (int i = 0; i < 10; ++i) upstream_->request_metadata({"t"});
  ASSERT_TRUE(run_until([&] { return upstream_->metadata_requests_sent() > before; }, 2000));
  run_for(300);
  EXPECT_EQ(upstream_->metadata_requests_sent(), before + 1);
}

TEST_F(UpstreamOnMock, LeaderMoveIsSeenAfterRefresh) {
  start();
  ASSERT_TRUE(refresh());
  ASSERT_EQ(leader_of(0), 1);
  ASSERT_TRUE(mock_.set_leader("t", 0, 3));
  ASSERT_TRUE(run_until([&] { return refresh() && leader_of(0) == 3; }, 5000));
  // Reported as the mock says it; telling a change from a stale answer is the
  // pipeline's TopicTable's (topic_table_test).
}

TEST_F(UpstreamOnMock, UnknownTopicIsPassedThrough) {
  start();
  const int before = updates_;
  upstream_->request_metadata({"missing"});
  ASSERT_TRUE(run_until([&] { return updates_ > before && last_.contains("missing"); }, 5000));
  // The mock auto-creates topics it is asked about unless told otherwise;
  // either answer is a value, never a hang.
  const auto& m = last_["missing"];
  EXPECT_TRUE(m.error == ErrorCode::kUnknownTopicOrPartition || m.error == ErrorCode::kNone ||
              m.error == ErrorCode::kLeaderNotAvailable)
      << error_name(m.error);
}

TEST_F(UpstreamOnMock, ProduceGetsBaseOffsets) {
  start();
  ASSERT_TRUE(refresh());
  const std::int32_t leader = leader_of(2);
  ASSERT_TRUE(wait_sendable(leader));
  const Bytes first = batch(3), second = batch(2);
  std::vector<ProduceResult> results;
  std::vector<std::int16_t> sent_as;
  // Asked for v13, sent (and reported) as the v7 the mock negotiated.
  upstream_->send_produce(leader, produce(first, 2), 13, [&](std::int16_t v, ProduceResult r) {
    sent_as.push_back(v);
    results.push_back(std::move(r));
  });
  EXPECT_TRUE(results.empty());  // never inside the call
  upstream_->send_produce(leader, produce(second, 2), upstream_->produce_version(leader),
                          [&](std::int16_t, ProduceResult r) { results.push_back(std::move(r)); });
  ASSERT_TRUE(run_until([&] { return results.size() == 2; }, 5000));
  for (const auto& r : results) {
    ASSERT_TRUE(r) << error_name(r.error());
    ASSERT_EQ(r->responses.size(), 1u);
    EXPECT_EQ(r->responses[0].name, "t");
    EXPECT_EQ(r->responses[0].partition_responses[0].error_code, ErrorCode::kNone);
  }
  EXPECT_EQ(results[0]->responses[0].partition_responses[0].base_offset, 0);
  EXPECT_EQ(results[1]->responses[0].partition_responses[0].base_offset, 3);
  EXPECT_EQ(sent_as, (std::vector<std::int16_t>{7}));
  bool counted = false;
  for (const auto& b : upstream_->broker_status()) {
    if (b.node_id == leader) {
      counted = true;
      EXPECT_TRUE(b.connected);
      EXPECT_EQ(b.produce_requests_sent, 2u);
      EXPECT_EQ(b.in_flight, 0);
      EXPECT_EQ(b.produce_version, 7);
    }
  }
  EXPECT_TRUE(counted);
}

TEST_F(UpstreamOnMock, InitProducerIdReturnsAnId) {
  start();
  InitProducerIdRequest request;
  request.transactional_id = std::nullopt;
  request.transaction_timeout_ms = 60000;
  std::optional<InitProducerIdResult> result;
  upstream_->send_init_producer_id(request, [&](InitProducerIdResult r) { result = std::move(r); });
  EXPECT_FALSE(result);
  ASSERT_TRUE(run_until([&] { return result.has_value(); }, 5000));
  ASSERT_TRUE(*result) << error_name(result->error());
  EXPECT_EQ((*result)->error_code, ErrorCode::kNone);
  EXPECT_GE((*result)->producer_id.value, 0);
  EXPECT_EQ((*result)->producer_epoch.value, 0);
}

TEST_F(UpstreamOnMock, BrokerDownFailsOutstandingRequestsOnceAndReconnectsLater) {
  start();
  ASSERT_TRUE(refresh());
  const std::int32_t leader = leader_of(0);
  ASSERT_TRUE(wait_sendable(leader));
  ASSERT_TRUE(mock_.set_rtt(leader, 2000));  // keeps the requests outstanding
  const Bytes records = batch(1);
  std::vector<int> calls(3, 0);
  std::vector<ErrorCode> errors(3, ErrorCode::kNone);
  for (int i = 0; i < 3; ++i) {
    upstream_->send_produce(leader, produce(records, 0), 7, [&, i](std::int16_t, ProduceResult r) {
      ++calls[static_cast<std::size_t>(i)];
      errors[static_cast<std::size_t>(i)] = r ? ErrorCode::kNone : r.error();
    });
  }
  run_for(50);
  ASSERT_TRUE(mock_.set_down(leader));
  ASSERT_TRUE(run_until([&] { return calls == std::vector<int>{1, 1, 1}; }, 5000));
  for (ErrorCode e : errors) EXPECT_EQ(e, ErrorCode::kNetworkException) << error_name(e);
  EXPECT_FALSE(upstream_->can_send_produce(leader));
  run_for(300);  // a few failed reconnects
  ASSERT_TRUE(mock_.set_rtt(leader, 0));
  ASSERT_TRUE(mock_.set_up(leader));
  ASSERT_TRUE(wait_sendable(leader, 8000));
  std::optional<ProduceResult> after;
  upstream_->send_produce(leader, produce(records, 0), 7, [&](std::int16_t, ProduceResult r) { after = std::move(r); });
  ASSERT_TRUE(run_until([&] { return after.has_value(); }, 5000));
  EXPECT_TRUE(*after) << error_name(after->error());
  EXPECT_EQ(calls, (std::vector<int>{1, 1, 1}));  // still exactly once
}

TEST_F(UpstreamOnMock, RequestTimeoutFailsWithRequestTimedOutAndReconnects) {
  start(/*request_timeout_ms=*/400);
  ASSERT_TRUE(refresh());
  const std::int32_t leader = leader_of(1);
  ASSERT_TRUE(wait_sendable(leader));
  ASSERT_TRUE(mock_.set_rtt(leader, 1500));
  const Bytes records = batch(1);
  int calls = 0;
  ErrorCode error = ErrorCode::kNone;
  upstream_->send_produce(leader, produce(records, 1), 7, [&](std::int16_t, ProduceResult r) {
    ++calls;
    error = r ? ErrorCode::kNone : r.error();
  });
  ASSERT_TRUE(run_until([&] { return calls > 0; }, 3000));
  EXPECT_EQ(error, ErrorCode::kRequestTimedOut);
  EXPECT_FALSE(upstream_->can_send_produce(leader));  // closed: a late answer would desync
  EXPECT_TRUE(capture_->contains("timed out after 400 ms"));
  ASSERT_TRUE(mock_.set_rtt(leader, 0));
  ASSERT_TRUE(wait_sendable(leader, 8000));
  run_for(100);
  EXPECT_EQ(calls, 1);
}

TEST_F(UpstreamOnMock, CloseFailsEverythingOutstandingOnce) {
  start();
  ASSERT_TRUE(refresh());
  const std::int32_t leader = leader_of(0);
  ASSERT_TRUE(wait_sendable(leader));
  ASSERT_TRUE(mock_.set_rtt(leader, 2000));
  const Bytes records = batch(1);
  int produce_calls = 0, init_calls = 0, late_calls = 0;
  ErrorCode produce_error = ErrorCode::kNone;
  upstream_->send_produce(leader, produce(records, 0), 7, [&](std::int16_t, ProduceResult r) {
    ++produce_calls;
    produce_error = r ? ErrorCode::kNone : r.error();
  });
  InitProducerIdRequest init;
  init.transactional_id = std::nullopt;
  upstream_->send_init_producer_id(init, [&](InitProducerIdResult) { ++init_calls; });
  upstream_->close();
  EXPECT_EQ(produce_calls + init_calls, 0);  // later, not inside close()
  upstream_->send_produce(leader, produce(records, 0), 7, [&](std::int16_t, ProduceResult) { ++late_calls; });
  ASSERT_TRUE(run_until([&] { return produce_calls && init_calls && late_calls; }, 3000));
  run_for(100);
  EXPECT_EQ(produce_calls, 1);
  EXPECT_EQ(init_calls, 1);
  EXPECT_EQ(late_calls, 1);
  EXPECT_EQ(produce_error, ErrorCode::kNetworkException);
  EXPECT_FALSE(upstream_->can_send_produce(leader));
}

}  // namespace
}  // namespace pp::upstream::test
