// InitProducerId v0-v5 (proxy/protocol/messages/init_producer_id.h). Expected
// bytes are written out field by field from InitProducerIdRequest.json /
// InitProducerIdResponse.json, independently of the schema.
#include "proxy/protocol/messages/init_producer_id.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/message_test_helpers.h"

namespace pp {
namespace {

using namespace test_messages;

// ---- fixtures: every field set, per JSON ----

InitProducerIdRequest full_request() {
  InitProducerIdRequest r;
  r.transactional_id = "txn-1";
  r.transaction_timeout_ms = 60000;
  r.producer_id = ProducerId{1000};
  r.producer_epoch = ProducerEpoch{5};
  return r;
}

Bytes expected_request(std::int16_t v, bool null_id) {
  Expect e(v >= 2);
  if (null_id) {
    e.null_str();
  } else {
    e.str("txn-1");
  }
  e.i32(60000);
  if (v >= 3) e.i64(1000).i16(5);
  e.no_tags();
  return e.bytes();
}

InitProducerIdResponse full_response() {
  InitProducerIdResponse r;
  r.throttle_time_ms = 20;
  r.error_code = ErrorCode::kProducerFenced;
  r.producer_id = ProducerId{0x0102030405060708};
  r.producer_epoch = ProducerEpoch{32767};
  return r;
}

Bytes expected_response(std::int16_t v) {
  Expect e(v >= 2);
  e.i32(20).i16(90).i64(0x0102030405060708).i16(32767).no_tags();
  return e.bytes();
}

// ---- tests ----

TEST(InitProducerId, VersionRange) {
  EXPECT_EQ(InitProducerIdRequest::kApiKey, ApiKey::kInitProducerId);
  EXPECT_EQ(InitProducerIdResponse::kApiKey, ApiKey::kInitProducerId);
  EXPECT_EQ(InitProducerIdRequest::kVersions.min, 0);
  EXPECT_EQ(InitProducerIdRequest::kVersions.max, 5);
  EXPECT_EQ(InitProducerIdResponse::kVersions.min, 0);
  EXPECT_EQ(InitProducerIdResponse::kVersions.max, 5);
  EXPECT_EQ(InitProducerIdRequest::kFlexibleSince, 2);
  EXPECT_EQ(InitProducerIdResponse::kFlexibleSince, 2);
}

TEST(InitProducerId, DefaultsAreKafkas) {
  const InitProducerIdRequest q;
  EXPECT_EQ(q.transactional_id, std::optional<std::string>(""));  // generated default, not null
  EXPECT_EQ(q.producer_id, kNoProducerId);
  EXPECT_EQ(q.producer_epoch, kNoProducerEpoch);
  const InitProducerIdResponse r;
  EXPECT_EQ(r.producer_id, kNoProducerId);
  EXPECT_EQ(r.producer_epoch, ProducerEpoch{0});
}

TEST(InitProducerId, RequestEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 0; v <= 5; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const InitProducerIdRequest value = at_version(full_request(), v);
    expect_all_set(value, v, "InitProducerIdRequest");
    EXPECT_EQ(hex(expect_round_trip(value, v)), hex(expected_request(v, false)));

    InitProducerIdRequest idempotent = value;
    idempotent.transactional_id.reset();
    EXPECT_EQ(hex(expect_round_trip(idempotent, v)), hex(expected_request(v, true)));
  }
}

TEST(InitProducerId, ResponseEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 0; v <= 5; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const InitProducerIdResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "InitProducerIdResponse");
    EXPECT_EQ(hex(expect_round_trip(value, v)), hex(expected_response(v)));
  }
}

TEST(InitProducerId, IdempotentRequestsByHand) {
  // What this proxy sends: no transactional id, the largest timeout.
  InitProducerIdRequest r;
  r.transactional_id.reset();
  r.transaction_timeout_ms = 0x7fffffff;
  EXPECT_EQ(hex(encode_body(r, 0)), "ffff7fffffff");
  EXPECT_EQ(hex(encode_body(r, 1)), "ffff7fffffff");
  // v2: compact null string (0), then an empty tag section.
  EXPECT_EQ(hex(encode_body(r, 2)), "007fffffff00");
  // v3 (KIP-360): producer id and epoch, both -1 when not resuming.
  EXPECT_EQ(hex(encode_body(r, 3)), unspaced("007fffffff ffffffffffffffff ffff 00"));
  // A set id and epoch are dropped below v3, where the fields do not exist.
  r.producer_id = ProducerId{7};
  r.producer_epoch = ProducerEpoch{1};
  EXPECT_EQ(hex(encode_body(r, 2)), "007fffffff00");
  EXPECT_EQ(hex(encode_body(r, 5)), unspaced("007fffffff 0000000000000007 0001 00"));
}

TEST(InitProducerId, ResponseV0ByHand) {
  // throttle 0, NONE, producer id 4096, epoch 0.
  const Bytes wire = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0};
  WireReader r(wire);
  auto decoded = decode_body<InitProducerIdResponse>(r, 0);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(decoded->error_code, ErrorCode::kNone);
  EXPECT_EQ(decoded->producer_id, ProducerId{4096});
  EXPECT_EQ(decoded->producer_epoch, ProducerEpoch{0});
}

TEST(InitProducerId, UnknownTagsSurviveARoundTrip) {
  InitProducerIdRequest q = full_request();
  q.unknown_tags = {RawTaggedField{0, {0x01}}, RawTaggedField{3, {0x02, 0x03}}};
  InitProducerIdResponse r = full_response();
  r.unknown_tags = {RawTaggedField{1, {}}};
  for (std::int16_t v = 2; v <= 5; ++v) {
    expect_round_trip(at_version(q, v), v);
    expect_round_trip(at_version(r, v), v);
  }
}

TEST(InitProducerId, VersionsOutsideTheRangeAreRefused) {
  const Bytes encoded = encode_body(full_request(), 5);
  for (std::int16_t v : {-1, 6}) {
    WireReader r(encoded);
    auto res = decode_body<InitProducerIdRequest>(r, v);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
  }
}

}  // namespace
}  // namespace pp
