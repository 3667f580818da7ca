// SaslAuthenticate v0-v2 (proxy/protocol/messages/sasl_authenticate.h), bytes
// written by hand from SaslAuthenticateRequest.json / SaslAuthenticateResponse.json.
#include "proxy/protocol/messages/sasl_authenticate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/message_test_helpers.h"

namespace pp {
namespace {

using namespace test_messages;

// ---- fixtures ----

// A SASL/PLAIN token: authzid "", authcid "user", password "pass".
const Bytes kPlainToken = {0, 'u', 's', 'e', 'r', 0, 'p', 'a', 's', 's'};

SaslAuthenticateResponse full_response() {
  SaslAuthenticateResponse r;
  r.error_code = ErrorCode::kSaslAuthenticationFailed;
  r.error_message = "bad creds";
  r.auth_bytes = {1, 2, 3};
  r.session_lifetime_ms = 3600000;
  return r;
}

// ---- tests ----

TEST(SaslAuthenticate, VersionRange) {
  EXPECT_EQ(SaslAuthenticateRequest::kApiKey, ApiKey::kSaslAuthenticate);
  EXPECT_EQ(SaslAuthenticateResponse::kApiKey, ApiKey::kSaslAuthenticate);
  EXPECT_EQ(SaslAuthenticateRequest::kVersions.min, 0);
  EXPECT_EQ(SaslAuthenticateRequest::kVersions.max, 2);
  EXPECT_EQ(SaslAuthenticateResponse::kVersions.min, 0);
  EXPECT_EQ(SaslAuthenticateResponse::kVersions.max, 2);
  EXPECT_EQ(SaslAuthenticateRequest::kFlexibleSince, 2);
  EXPECT_EQ(SaslAuthenticateResponse::kFlexibleSince, 2);
}

TEST(SaslAuthenticate, DefaultsAreKafkas) {
  const SaslAuthenticateResponse r;
  EXPECT_EQ(r.error_message, std::optional<std::string>(""));  // generated default, not null
  EXPECT_EQ(r.session_lifetime_ms, 0);
}

TEST(SaslAuthenticate, RequestEveryVersionByHand) {
  SaslAuthenticateRequest q;
  q.auth_bytes = kPlainToken;
  for (std::int16_t v = 0; v <= 2; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    expect_all_set(q, v, "SaslAuthenticateRequest");
    const std::string expected =
        v < 2 ? unspaced("0000000a 00757365720070617373") : unspaced("0b 00757365720070617373 00");
    EXPECT_EQ(hex(expect_round_trip(q, v)), expected);
  }
}

TEST(SaslAuthenticate, ResponseEveryVersionByHand) {
  const std::string expected[] = {
      unspaced("003a 0009 626164206372656473 00000003 010203"),
      unspaced("003a 0009 626164206372656473 00000003 010203 000000000036ee80"),
      unspaced("003a 0a 626164206372656473 04 010203 000000000036ee80 00"),
  };
  for (std::int16_t v = 0; v <= 2; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const SaslAuthenticateResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "SaslAuthenticateResponse");
    EXPECT_EQ(hex(expect_round_trip(value, v)), expected[v]);
  }
}

TEST(SaslAuthenticate, NullErrorMessage) {
  SaslAuthenticateResponse r = full_response();
  r.error_code = ErrorCode::kNone;
  r.error_message.reset();
  r.auth_bytes.clear();
  const std::string expected[] = {
      unspaced("0000 ffff 00000000"),
      unspaced("0000 ffff 00000000 000000000036ee80"),
      unspaced("0000 00 01 000000000036ee80 00"),
  };
  for (std::int16_t v = 0; v <= 2; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    EXPECT_EQ(hex(expect_round_trip(at_version(r, v), v)), expected[v]);
  }
}

TEST(SaslAuthenticate, UnknownTagsSurviveARoundTrip) {
  SaslAuthenticateRequest q;
  q.auth_bytes = kPlainToken;
  q.unknown_tags = {RawTaggedField{0, {0x01, 0x02}}};
  SaslAuthenticateResponse r = full_response();
  r.unknown_tags = {RawTaggedField{2, {}}, RawTaggedField{300, {0xff}}};
  expect_round_trip(q, 2);
  expect_round_trip(r, 2);
}

TEST(SaslAuthenticate, NullAuthBytesAreRefused) {
  // auth_bytes is not nullable: a -1 length (classic) or 0 (compact) is an error.
  const Bytes classic = {0xff, 0xff, 0xff, 0xff};
  WireReader r0(classic);
  auto res0 = decode_body<SaslAuthenticateRequest>(r0, 1);
  ASSERT_FALSE(res0.has_value());
  EXPECT_EQ(res0.error().field, "auth_bytes");
  const Bytes compact = {0x00, 0x00};
  WireReader r2(compact);
  EXPECT_FALSE(decode_body<SaslAuthenticateRequest>(r2, 2).has_value());
}

TEST(SaslAuthenticate, VersionsOutsideTheRangeAreRefused) {
  const Bytes wire = encode_body(SaslAuthenticateRequest{}, 2);
  WireReader r(wire);
  auto res = decode_body<SaslAuthenticateRequest>(r, 3);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
}

}  // namespace
}  // namespace pp
