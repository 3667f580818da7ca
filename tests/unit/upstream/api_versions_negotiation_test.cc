// Version negotiation rules (api_versions_negotiation.h), including the
// librdkafka mock's malformed ApiVersions v3 answer from tests/golden.
#include "proxy/upstream/api_versions_negotiation.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/header.h"

namespace pp::upstream {
namespace {

ApiVersionRange range(ApiKey key, std::int16_t lo, std::int16_t hi) {
  return ApiVersionRange{static_cast<std::int16_t>(key), lo, hi, {}};
}

TEST(NegotiatedVersions, HighestBothSpeak) {
  const std::vector<ApiVersionRange> mock = {range(ApiKey::kProduce, 0, 7), range(ApiKey::kMetadata, 0, 2),
                                             range(ApiKey::kApiVersions, 0, 2), range(ApiKey::kInitProducerId, 0, 4)};
  const auto v = NegotiatedVersions::negotiate(mock);
  EXPECT_EQ(v.version(ApiKey::kProduce), 7);
  EXPECT_EQ(v.version(ApiKey::kMetadata), 2);
  EXPECT_EQ(v.version(ApiKey::kInitProducerId), 4);
  EXPECT_EQ(v.version(ApiKey::kApiVersions), 2);
  EXPECT_FALSE(v.version(ApiKey::kFetch));  // not offered
  EXPECT_TRUE(v.unusable().empty());
  EXPECT_EQ(v.describe(), "Produce v7, Metadata v2, InitProducerId v4, ApiVersions v2");
}

TEST(NegotiatedVersions, NewerBrokerIsCappedAtOurMax) {
  const std::vector<ApiVersionRange> kafka = {range(ApiKey::kProduce, 3, 20), range(ApiKey::kMetadata, 0, 14),
                                              range(ApiKey::kInitProducerId, 0, 6)};
  const auto v = NegotiatedVersions::negotiate(kafka);
  EXPECT_EQ(v.version(ApiKey::kProduce), 14);
  EXPECT_EQ(v.version(ApiKey::kMetadata), 13);
  EXPECT_EQ(v.version(ApiKey::kInitProducerId), 5);
}

TEST(NegotiatedVersions, ProduceBelowV3IsUnusable) {
  const std::vector<ApiVersionRange> old = {range(ApiKey::kProduce, 0, 2), range(ApiKey::kMetadata, 0, 1)};
  const auto v = NegotiatedVersions::negotiate(old);
  EXPECT_FALSE(v.version(ApiKey::kProduce));
  EXPECT_EQ(v.version(ApiKey::kMetadata), 1);
  ASSERT_EQ(v.unusable().size(), 2u);  // Produce too old, InitProducerId missing
  EXPECT_NE(v.unusable()[0].find("Produce: broker speaks v0-v2, we need v3-v14"), std::string::npos);
  EXPECT_NE(v.unusable()[1].find("InitProducerId: not offered"), std::string::npos);
}

TEST(NegotiatedVersions, BrokerMinimumAboveOurMaximumIsUnusable) {
  const auto v = NegotiatedVersions::negotiate(std::vector{range(ApiKey::kProduce, 15, 20)});
  EXPECT_FALSE(v.version(ApiKey::kProduce));
}

Bytes body_of(const ApiVersionsResponse& r, std::int16_t version) {
  return encode_body(r, version);
}

TEST(ApiVersionsResponseDecode, V0LayoutAnswerToV3IsRead) {
  // KIP-511: a broker that doesn't speak v3 answers UNSUPPORTED_VERSION as v0.
  ApiVersionsResponse r;
  r.error_code = ErrorCode::kUnsupportedVersion;
  r.api_keys = {range(ApiKey::kApiVersions, 0, 2), range(ApiKey::kProduce, 0, 7)};
  const auto decoded = decode_api_versions_response(body_of(r, 0), 3);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->error_code, ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(api_versions_retry_version(*decoded, 3), 2);
}

TEST(ApiVersionsResponseDecode, V3AnswerIsReadAtV3) {
  ApiVersionsResponse r;
  r.api_keys = {range(ApiKey::kProduce, 3, 14)};
  r.throttle_time_ms = 9;
  const auto decoded = decode_api_versions_response(body_of(r, 3), 3);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->throttle_time_ms, 9);
  EXPECT_EQ(decoded->api_keys.size(), 1u);
}

TEST(ApiVersionsResponseDecode, RetryVersionWithoutARangeIsV0) {
  ApiVersionsResponse r;
  r.error_code = ErrorCode::kUnsupportedVersion;
  EXPECT_EQ(api_versions_retry_version(r, 3), 0);
  r.api_keys = {range(ApiKey::kApiVersions, 0, 9)};  // lists more than we sent: go one lower
  EXPECT_EQ(api_versions_retry_version(r, 3), 2);
}

Bytes read_hex(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  Bytes out;
  std::string hex;
  for (char c : ss.str()) {
    if (std::isxdigit(static_cast<unsigned char>(c))) hex.push_back(c);
  }
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(ApiVersionsResponseDecode, LibrdkafkaMocksMalformedV3AnswerFailsCleanly) {
  // tests/golden/PROVENANCE.md: error 35, an int8 count, one entry, no tags.
  const Bytes frame = read_hex(std::string(PP_SOURCE_DIR) +
                               "/tests/golden/api_versions_response/v3/"
                               "librdkafka_mock_to_kcat_default_none_acks_all.hex");
  ASSERT_GT(frame.size(), 8u);
  WireReader r(frame);
  ASSERT_TRUE(decode_response_header(r, ApiKey::kApiVersions, 3));
  EXPECT_FALSE(decode_api_versions_response(r.rest(), 3));
}

TEST(ClientThrottles, Kip219Versions) {
  EXPECT_FALSE(client_throttles(ApiKey::kProduce, 5));
  EXPECT_TRUE(client_throttles(ApiKey::kProduce, 6));
  EXPECT_FALSE(client_throttles(ApiKey::kMetadata, 2));
  EXPECT_TRUE(client_throttles(ApiKey::kInitProducerId, 1));
}

}  // namespace
}  // namespace pp::upstream
