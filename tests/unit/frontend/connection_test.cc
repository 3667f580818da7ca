// Connection-level rules over real sockets: bounds (request size,
// connections, idle time), what closes a connection and what doesn't, and
// that one client's trouble never touches another's.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using ConnectionTest = test::FrontendFixture;

bool answers_api_versions(test::TestClient& client, std::int32_t correlation) {
  if (!client.send(ApiKey::kApiVersions, 1, correlation, ApiVersionsRequest{})) return false;
  auto frame = client.read_frame();
  std::int32_t got = -1;
  return frame && test::decode_response<ApiVersionsResponse>(*frame, 1, &got) && got == correlation;
}

TEST_F(ConnectionTest, AnOversizePrefixClosesOnlyThatConnection) {
  FrontendConfig config;
  config.max_request_bytes = 1024;
  start(config);
  auto bad = connect();
  auto good = connect();
  ASSERT_TRUE(answers_api_versions(*good, 1));
  // Only the size prefix: refused before a byte of the body is buffered.
  const Bytes prefix = {0x00, 0x00, 0x10, 0x00};  // 4096 > 1024
  ASSERT_TRUE(bad->write_raw(prefix));
  EXPECT_TRUE(bad->wait_closed());
  EXPECT_TRUE(answers_api_versions(*good, 2));
  EXPECT_EQ(frontend_->counters().connections_closed_for_errors_total, 1u);
}

TEST_F(ConnectionTest, EarlierAnswersAreWrittenBeforeAFailedStreamCloses) {
  start();
  auto client = connect();
  // A Produce waiting on the sink, then an unknown API in the same burst.
  ASSERT_TRUE(client->write_raw(test::produce_frame(
      2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}})));
  RequestHeader h;
  h.api_key = static_cast<ApiKey>(999);
  h.api_version = 0;
  h.correlation_id = 2;
  Bytes unknown;
  WireWriter w(unknown);
  const auto at = w.reserve_int32();
  encode_request_header(w, h);
  w.patch_int32(at, static_cast<std::int32_t>(unknown.size() - 4));
  ASSERT_TRUE(client->write_raw(unknown));
  ASSERT_TRUE(wait_for_submissions(1));
  test::run_for(&loop_, 20);
  EXPECT_FALSE(client->eof());
  sink_.complete(0, 10);
  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  std::int32_t correlation = 0;
  ASSERT_TRUE(test::decode_response<ProduceResponse>(*frame, 2, &correlation));
  EXPECT_EQ(correlation, 1);
  EXPECT_TRUE(client->wait_closed());
}

TEST_F(ConnectionTest, AnUnknownApiClosesThatConnectionOnly) {
  start();
  auto bad = connect();
  auto good = connect();
  RequestHeader h;
  h.api_key = static_cast<ApiKey>(77);
  h.api_version = 3;
  h.correlation_id = 5;
  Bytes frame;
  WireWriter w(frame);
  const auto at = w.reserve_int32();
  encode_request_header(w, h);
  w.patch_int32(at, static_cast<std::int32_t>(frame.size() - 4));
  ASSERT_TRUE(bad->write_raw(frame));
  EXPECT_TRUE(bad->wait_closed());
  EXPECT_TRUE(answers_api_versions(*good, 1));
}

TEST_F(ConnectionTest, ADescribedVersionWeCannotServeCloses) {
  start();
  auto client = connect();
  // Metadata v13 is past what the codec describes: nothing to answer with.
  RequestHeader h;
  h.api_key = ApiKey::kMetadata;
  h.api_version = 13;
  h.correlation_id = 5;
  Bytes frame;
  WireWriter w(frame);
  const auto at = w.reserve_int32();
  encode_request_header(w, h);
  w.patch_int32(at, static_cast<std::int32_t>(frame.size() - 4));
  ASSERT_TRUE(client->write_raw(frame));
  EXPECT_TRUE(client->wait_closed());
}

InitProducerIdResponse init_producer_id(test::TestClient& client, std::int16_t version,
                                        const InitProducerIdRequest& r) {
  EXPECT_TRUE(client.send(ApiKey::kInitProducerId, version, 11, r));
  auto frame = client.read_frame();
  EXPECT_TRUE(frame);
  if (!frame) return {};
  std::int32_t correlation = 0;
  auto response = test::decode_response<InitProducerIdResponse>(*frame, version, &correlation);
  EXPECT_TRUE(response);
  EXPECT_EQ(correlation, 11);
  return response.value_or(InitProducerIdResponse{});
}

TEST_F(ConnectionTest, InitProducerIdHandsOutIdsAndBumpsEpochsInEveryVersion) {
  start();
  auto client = connect();
  for (std::int16_t version = 0; version <= 5; ++version) {
    SCOPED_TRACE(version);
    InitProducerIdRequest request;
    request.transactional_id = std::nullopt;
    request.transaction_timeout_ms = 60000;
    auto fresh = init_producer_id(*client, version, request);
    EXPECT_EQ(fresh.error_code, ErrorCode::kNone);
    EXPECT_GE(fresh.producer_id.value, 0);
    EXPECT_EQ(fresh.producer_epoch.value, 0);
    if (version < 3) continue;
    request.producer_id = fresh.producer_id;  // KIP-360: bump this one
    request.producer_epoch = fresh.producer_epoch;
    auto bumped = init_producer_id(*client, version, request);
    EXPECT_EQ(bumped.error_code, ErrorCode::kNone);
    EXPECT_EQ(bumped.producer_id, fresh.producer_id);
    EXPECT_EQ(bumped.producer_epoch.value, 1);
  }
  EXPECT_TRUE(answers_api_versions(*client, 12));
}

TEST_F(ConnectionTest, InitProducerIdWithATransactionalIdIsRefusedAndTheConnectionStays) {
  start();
  auto client = connect();
  InitProducerIdRequest request;
  request.transactional_id = "orders-txn";
  auto response = init_producer_id(*client, 4, request);
  EXPECT_EQ(response.error_code, ErrorCode::kTransactionalIdAuthorizationFailed);
  EXPECT_EQ(response.producer_id, kNoProducerId);
  EXPECT_EQ(response.producer_epoch, kNoProducerEpoch);
  request.transactional_id = "";
  EXPECT_EQ(init_producer_id(*client, 4, request).error_code, ErrorCode::kInvalidRequest);
  EXPECT_TRUE(answers_api_versions(*client, 12));
}

TEST_F(ConnectionTest, AMalformedRequestBodyClosesAndNothingIsSubmitted) {
  start();
  auto client = connect();
  Bytes frame = test::produce_frame(
      2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}});
  frame.resize(frame.size() - 10);  // cut the body short, then fix the prefix
  const auto size = static_cast<std::uint32_t>(frame.size() - 4);
  frame[0] = static_cast<std::uint8_t>(size >> 24);
  frame[1] = static_cast<std::uint8_t>(size >> 16);
  frame[2] = static_cast<std::uint8_t>(size >> 8);
  frame[3] = static_cast<std::uint8_t>(size);
  ASSERT_TRUE(client->write_raw(frame));
  EXPECT_TRUE(client->wait_closed());
  EXPECT_TRUE(sink_.submissions.empty());
}

TEST_F(ConnectionTest, ConnectionsOverMaxConnectionsAreRefused) {
  FrontendConfig config;
  config.max_connections = 1;
  start(config);
  auto first = connect();
  ASSERT_TRUE(answers_api_versions(*first, 1));
  auto second = connect();
  EXPECT_TRUE(second->wait_closed());
  EXPECT_EQ(frontend_->counters().connections_refused_total, 1u);
  EXPECT_TRUE(answers_api_versions(*first, 2));
}

TEST_F(ConnectionTest, ConnectionsOverThePerPeerLimitAreRefusedOthersAccepted) {
  FrontendConfig config;
  config.max_connections_per_peer = 2;
  start(config);
  auto a1 = connect();
  auto a2 = connect();
  ASSERT_TRUE(answers_api_versions(*a1, 1));
  ASSERT_TRUE(answers_api_versions(*a2, 1));
  auto a3 = connect();
  EXPECT_TRUE(a3->wait_closed()) << "a third connection from 127.0.0.1";
  EXPECT_EQ(frontend_->counters().connections_refused_total, 1u);

  constexpr std::uint32_t kOtherPeer = 0x7f000002;  // 127.0.0.2
  auto b1 = connect(kOtherPeer);
  EXPECT_TRUE(answers_api_versions(*b1, 1)) << "another peer has its own share";

  a1->close();
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->open_connections() == 2; }));
  auto a4 = connect();
  EXPECT_TRUE(answers_api_versions(*a4, 2)) << "a closed connection gives its slot back";
  EXPECT_EQ(frontend_->counters().connections_refused_total, 1u);
}

TEST_F(ConnectionTest, AnIdleConnectionIsClosedButOneWaitingOnUsIsNot) {
  FrontendConfig config;
  config.idle_timeout_ms = 100;
  start(config);
  auto idle = connect();
  auto waiting = connect();
  ASSERT_TRUE(waiting->write_raw(test::produce_frame(
      2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}})));
  ASSERT_TRUE(wait_for_submissions(1));
  EXPECT_TRUE(idle->wait_closed(2000));
  test::run_for(&loop_, 300);
  EXPECT_FALSE(waiting->eof());  // its answer is still owed
  sink_.complete(0, 1);
  EXPECT_TRUE(waiting->read_frame());
}

TEST_F(ConnectionTest, AClientLeavingWithRequestsPendingStillHasItsRecordsDelivered) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(test::produce_frame(
      2, 1, -1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kGzip, test::numbered_records(4))}})));
  ASSERT_TRUE(wait_for_submissions(1));
  client->close();
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->open_connections() == 0; }));
  // The sink still owns the run and its bytes; completing it writes nothing.
  EXPECT_EQ(sink_.submissions[0].run.records.size(), 4u);
  EXPECT_EQ(
      std::string(sink_.submissions[0].run.records[3].value->begin(), sink_.submissions[0].run.records[3].value->end()),
      "r-value-3");
  sink_.complete(0, 9);
  test::run_for(&loop_, 20);
  EXPECT_EQ(frontend_->counters().client_connections, 0);
}

TEST_F(ConnectionTest, DrainingAnswersWhatWasReadThenCloses) {
  start();
  auto waiting = connect();
  auto idle = connect();
  ASSERT_TRUE(answers_api_versions(*idle, 1));
  ASSERT_TRUE(waiting->write_raw(test::produce_frame(
      2, 1, -1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(2))}})));
  ASSERT_TRUE(wait_for_submissions(1));
  frontend_->drain();
  EXPECT_TRUE(idle->wait_closed());  // nothing owed: closed at once
  test::run_for(&loop_, 30);
  EXPECT_FALSE(waiting->eof());
  sink_.complete(0, 500);
  auto frame = waiting->read_frame();
  ASSERT_TRUE(frame);
  auto response = test::decode_response<ProduceResponse>(*frame, 2);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses[0].partition_responses[0].base_offset, 500);
  EXPECT_TRUE(waiting->wait_closed());
  // No new clients while draining.
  test::TestClient late(&loop_, frontend_->port());
  EXPECT_TRUE(!late.connected() || late.wait_closed(500) || frontend_->open_connections() == 0);
  EXPECT_EQ(frontend_->open_connections(), 0u);
}

TEST_F(ConnectionTest, StoppingWithRequestsPendingIsSafe) {
  start();
  auto client = connect();
  ASSERT_TRUE(client->write_raw(test::produce_frame(
      2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}})));
  ASSERT_TRUE(wait_for_submissions(1));
  frontend_->stop();
  EXPECT_TRUE(client->wait_closed());
  sink_.complete(0, 1);  // after stop: must not touch the closed session
  frontend_.reset();
  test::run_for(&loop_, 10);
}

}  // namespace
}  // namespace pp
