// ApiVersions: the table, and the answers on a real socket for v0, v3 and an
// unsupported version (KIP-511).
#include <gtest/gtest.h>

#include <algorithm>

#include "frontend_test_support.h"
#include "proxy/frontend/api_versions_answer.h"

namespace pp {
namespace {

const ApiVersionRange* find_range(const std::vector<ApiVersionRange>& ranges, ApiKey key) {
  for (const auto& r : ranges) {
    if (r.api_key == static_cast<std::int16_t>(key)) return &r;
  }
  return nullptr;
}

// `produce_max`: v13 when the upstream offers topic ids, else v12.
void expect_our_table(const std::vector<ApiVersionRange>& ranges,
                      std::int16_t produce_max = kFrontendMaxProduceVersion) {
  const auto* produce = find_range(ranges, ApiKey::kProduce);
  ASSERT_NE(produce, nullptr);
  EXPECT_EQ(produce->min_version, 0);  // KAFKA-18659: v0 must be listed
  EXPECT_GE(produce->max_version, 9);
  EXPECT_EQ(produce->max_version, produce_max);
  const auto* metadata = find_range(ranges, ApiKey::kMetadata);
  ASSERT_NE(metadata, nullptr);
  EXPECT_EQ(metadata->min_version, 0);
  EXPECT_EQ(metadata->max_version, 13);
  const auto* api_versions = find_range(ranges, ApiKey::kApiVersions);
  ASSERT_NE(api_versions, nullptr);
  EXPECT_EQ(api_versions->min_version, 0);
  EXPECT_GE(api_versions->max_version, 3);
  // Listed so librdkafka enables magic 2 (Fetch v4), zstd (Fetch v10) and
  // LZ4 (FindCoordinator v0), though the proxy serves neither.
  const auto* fetch = find_range(ranges, ApiKey::kFetch);
  ASSERT_NE(fetch, nullptr);
  EXPECT_EQ(fetch->min_version, 4);
  EXPECT_GE(fetch->max_version, 10);
  ASSERT_NE(find_range(ranges, ApiKey::kFindCoordinator), nullptr);
  // Served for idempotent clients (issue 16): v0-v5, KIP-360 bumps from v3.
  const auto* init = find_range(ranges, ApiKey::kInitProducerId);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->min_version, 0);
  EXPECT_EQ(init->max_version, 5);
  // Client SASL (listener.sasl): SaslHandshake v0-v1, SaslAuthenticate v0-v2,
  // listed whether or not the listener asks for SASL, as a broker does.
  const auto* handshake = find_range(ranges, ApiKey::kSaslHandshake);
  ASSERT_NE(handshake, nullptr);
  EXPECT_EQ(handshake->max_version, 1);
  const auto* authenticate = find_range(ranges, ApiKey::kSaslAuthenticate);
  ASSERT_NE(authenticate, nullptr);
  EXPECT_EQ(authenticate->max_version, 2);
  EXPECT_EQ(ranges.size(), 8u);
  EXPECT_TRUE(
      std::is_sorted(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.api_key < b.api_key; }));
}

TEST(ApiVersionsTable, ServesProduceFromV0AndOnlyWhatTheFrontEndHandles) {
  expect_our_table(advertised_api_ranges(true));
  EXPECT_TRUE(served_versions(ApiKey::kInitProducerId)->contains(4));
  EXPECT_FALSE(served_versions(ApiKey::kListOffsets));
  EXPECT_TRUE(served_versions(ApiKey::kProduce)->contains(0));
  EXPECT_TRUE(served_versions(ApiKey::kProduce)->contains(13));
  // v14 (KIP-1269) is the proxy's business with its upstream, not a client's.
  EXPECT_FALSE(served_versions(ApiKey::kProduce)->contains(14));
}

TEST(ApiVersionsTable, ProduceV13IsListedOnlyWhenTheUpstreamOffersTopicIds) {
  EXPECT_EQ(kFrontendMaxProduceVersion, 13);
  expect_our_table(advertised_api_ranges(true), 13);
  expect_our_table(advertised_api_ranges(false), 12);
  // Served either way: a client that sends v13 unasked gets answers per topic.
  EXPECT_TRUE(served_versions(ApiKey::kProduce)->contains(13));
}

using ApiVersionsSocketTest = test::FrontendFixture;

TEST_F(ApiVersionsSocketTest, AnswersV0AndV3FromOurTable) {
  start();
  auto client = connect();
  for (std::int16_t version : {0, 1, 2, 3}) {
    SCOPED_TRACE(version);
    ApiVersionsRequest request;
    request.client_software_name = "test";
    request.client_software_version = "1";
    ASSERT_TRUE(client->send(ApiKey::kApiVersions, version, 100 + version, request));
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    std::int32_t correlation = 0;
    // The ApiVersions response header is v0 even at v3 (no header tags).
    auto response = test::decode_response<ApiVersionsResponse>(*frame, version, &correlation);
    ASSERT_TRUE(response);
    EXPECT_EQ(correlation, 100 + version);
    EXPECT_EQ(response->error_code, ErrorCode::kNone);
    expect_our_table(response->api_keys);
  }
  EXPECT_EQ((frontend_->counters().requests_total.at({18, 3})), 1u);
}

// The directory's answer is asked per ApiVersions request: a connection made
// while the upstream offers no topic ids is kept on v12.
TEST_F(ApiVersionsSocketTest, ListsProduceV13AsTheDirectorySaysAtEachRequest) {
  start();
  for (bool ids : {false, true}) {
    SCOPED_TRACE(ids);
    directory_->topic_ids = ids;
    auto client = connect();
    ASSERT_TRUE(client->send(ApiKey::kApiVersions, 3, 1, ApiVersionsRequest{}));
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    auto response = test::decode_response<ApiVersionsResponse>(*frame, 3);
    ASSERT_TRUE(response);
    expect_our_table(response->api_keys, ids ? 13 : 12);
  }
}

TEST_F(ApiVersionsSocketTest, AnUnsupportedVersionGetsTheV0ErrorAnswerWithOurRanges) {
  start();
  auto client = connect();
  // A future version: header v2 (flexible), a body we don't read.
  RequestHeader h;
  h.api_key = ApiKey::kApiVersions;
  h.api_version = 42;
  h.correlation_id = 7;
  h.client_id = "future-client";
  Bytes frame;
  WireWriter w(frame);
  const auto at = w.reserve_int32();
  encode_request_header(w, h);
  w.uvarint(0);  // an empty tagged-field section as the body
  w.patch_int32(at, static_cast<std::int32_t>(frame.size() - 4));
  ASSERT_TRUE(client->write_raw(frame));
  auto answer = client->read_frame();
  ASSERT_TRUE(answer);
  std::int32_t correlation = 0;
  auto response = test::decode_response<ApiVersionsResponse>(*answer, 0, &correlation);
  ASSERT_TRUE(response);
  EXPECT_EQ(correlation, 7);
  EXPECT_EQ(response->error_code, ErrorCode::kUnsupportedVersion);
  expect_our_table(response->api_keys);

  // The connection stays usable: the client retries at a version we list.
  ASSERT_TRUE(client->send(ApiKey::kApiVersions, 3, 8, ApiVersionsRequest{}));
  auto retry = client->read_frame();
  ASSERT_TRUE(retry);
  EXPECT_EQ(test::decode_response<ApiVersionsResponse>(*retry, 3)->error_code, ErrorCode::kNone);
}

}  // namespace
}  // namespace pp
