// SaslHandshake v0-v1 (proxy/protocol/messages/sasl_handshake.h), bytes
// written by hand from SaslHandshakeRequest.json / SaslHandshakeResponse.json.
#include "proxy/protocol/messages/sasl_handshake.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "tests/support/message_test_helpers.h"

namespace pp {
namespace {

using namespace test_messages;

// ---- tests ----

TEST(SaslHandshake, VersionRange) {
  EXPECT_EQ(SaslHandshakeRequest::kApiKey, ApiKey::kSaslHandshake);
  EXPECT_EQ(SaslHandshakeResponse::kApiKey, ApiKey::kSaslHandshake);
  EXPECT_EQ(SaslHandshakeRequest::kVersions.min, 0);
  EXPECT_EQ(SaslHandshakeRequest::kVersions.max, 1);
  EXPECT_EQ(SaslHandshakeResponse::kVersions.min, 0);
  EXPECT_EQ(SaslHandshakeResponse::kVersions.max, 1);
  // flexibleVersions "none": no version we speak is flexible.
  EXPECT_FALSE(context_for<SaslHandshakeRequest>(1).flexible);
  EXPECT_FALSE(context_for<SaslHandshakeResponse>(1).flexible);
}

TEST(SaslHandshake, EveryVersionByHand) {
  SaslHandshakeRequest q;
  q.mechanism = "PLAIN";
  SaslHandshakeResponse r;
  r.error_code = ErrorCode::kUnsupportedSaslMechanism;
  r.mechanisms = {"PLAIN", "SCRAM-SHA-256"};
  for (std::int16_t v = 0; v <= 1; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    expect_all_set(q, v, "SaslHandshakeRequest");
    expect_all_set(r, v, "SaslHandshakeResponse");
    EXPECT_EQ(hex(expect_round_trip(q, v)), unspaced("0005 504c41494e"));
    EXPECT_EQ(hex(expect_round_trip(r, v)), unspaced("0021 00000002 0005 504c41494e 000d 534352414d2d5348412d323536"));
  }
}

TEST(SaslHandshake, EmptyMechanismListAndNoTags) {
  SaslHandshakeResponse r;
  // Tags we were handed are not written: this API has no tagged-field sections.
  r.unknown_tags = {RawTaggedField{0, {1}}};
  EXPECT_EQ(hex(encode_body(r, 1)), unspaced("0000 00000000"));
  r.unknown_tags.clear();
  expect_round_trip(r, 0);
}

TEST(SaslHandshake, NullMechanismIsRefused) {
  const Bytes wire = {0xff, 0xff};
  WireReader r(wire);
  auto res = decode_body<SaslHandshakeRequest>(r, 1);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(res.error().field, "mechanism");
}

TEST(SaslHandshake, VersionTwoIsRefused) {
  const Bytes wire = {0x00, 0x00};
  WireReader r(wire);
  auto res = decode_body<SaslHandshakeRequest>(r, 2);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
}

}  // namespace
}  // namespace pp
