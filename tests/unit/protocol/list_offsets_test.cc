// ListOffsets v1-v7 (proxy/protocol/messages/list_offsets.h). Expected bytes
// are written out field by field from ListOffsetsRequest.json /
// ListOffsetsResponse.json, independently of the schema.
#include "proxy/protocol/messages/list_offsets.h"

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

constexpr std::int64_t kTime = 1700000000123;

ListOffsetsRequest full_request() {
  ListOffsetsRequest r;
  r.replica_id = -1;  // what a consumer sends; Kafka's default is 0
  r.isolation_level = 1;
  r.topics = {ListOffsetsTopic{"orders", {ListOffsetsPartition{4, 12, kTime, {}}}, {}}};
  return r;
}

Bytes expected_request(std::int16_t v) {
  Expect e(v >= 6);
  e.i32(-1);
  if (v >= 2) e.i8(1);
  e.array(1).str("orders").array(1).i32(4);
  if (v >= 4) e.i32(12);
  e.i64(kTime).no_tags().no_tags().no_tags();
  return e.bytes();
}

ListOffsetsResponse full_response() {
  ListOffsetsResponse r;
  r.throttle_time_ms = 10;
  ListOffsetsPartitionResponse p{4, ErrorCode::kOffsetNotAvailable, kTime, 123456, 12, {}};
  r.topics = {ListOffsetsTopicResponse{"orders", {p}, {}}};
  return r;
}

Bytes expected_response(std::int16_t v) {
  Expect e(v >= 6);
  if (v >= 2) e.i32(10);
  e.array(1).str("orders").array(1).i32(4).i16(78).i64(kTime).i64(123456);
  if (v >= 4) e.i32(12);
  e.no_tags().no_tags().no_tags();
  return e.bytes();
}

// ---- tests ----

TEST(ListOffsets, VersionRange) {
  EXPECT_EQ(ListOffsetsRequest::kApiKey, ApiKey::kListOffsets);
  EXPECT_EQ(ListOffsetsResponse::kApiKey, ApiKey::kListOffsets);
  EXPECT_EQ(ListOffsetsRequest::kVersions.min, 1);
  EXPECT_EQ(ListOffsetsRequest::kVersions.max, 7);
  EXPECT_EQ(ListOffsetsResponse::kVersions.min, 1);
  EXPECT_EQ(ListOffsetsResponse::kVersions.max, 7);
  EXPECT_EQ(ListOffsetsRequest::kFlexibleSince, 6);
  EXPECT_EQ(ListOffsetsResponse::kFlexibleSince, 6);
}

TEST(ListOffsets, DefaultsAreKafkas) {
  const ListOffsetsPartition p;
  EXPECT_EQ(p.current_leader_epoch, -1);
  const ListOffsetsPartitionResponse r;
  EXPECT_EQ(r.timestamp, -1);
  EXPECT_EQ(r.offset, -1);
  EXPECT_EQ(r.leader_epoch, -1);
  EXPECT_EQ(ListOffsetsRequest{}.replica_id, 0);
}

TEST(ListOffsets, RequestEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 1; v <= 7; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const ListOffsetsRequest value = at_version(full_request(), v);
    expect_all_set(value, v, "ListOffsetsRequest");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_request(v)));
    expect_mutations_safe<ListOffsetsRequest>(encoded, v);
  }
}

TEST(ListOffsets, ResponseEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 1; v <= 7; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const ListOffsetsResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "ListOffsetsResponse");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_response(v)));
    expect_mutations_safe<ListOffsetsResponse>(encoded, v);
  }
}

TEST(ListOffsets, V1EarliestRequestByHand) {
  // replica -1, 1 topic "orders", 1 partition 0, timestamp -2 (earliest).
  ListOffsetsRequest r;
  r.replica_id = -1;
  r.topics = {ListOffsetsTopic{"orders", {ListOffsetsPartition{0, -1, kListOffsetsEarliest, {}}}, {}}};
  EXPECT_EQ(hex(encode_body(r, 1)), unspaced("ffffffff 00000001 0006 6f7264657273 00000001 00000000 fffffffffffffffe"));
}

TEST(ListOffsets, V7MaxTimestampRequestByHand) {
  // Flexible: compact array/string lengths are n + 1, and every struct ends
  // with an empty tag section.
  ListOffsetsRequest r;
  r.replica_id = -1;
  r.topics = {ListOffsetsTopic{"t", {ListOffsetsPartition{1, 5, kListOffsetsMaxTimestamp, {}}}, {}}};
  EXPECT_EQ(hex(encode_body(r, 7)), unspaced("ffffffff 00 02 02 74 02 00000001 00000005 fffffffffffffffd 00 00 00"));
}

TEST(ListOffsets, UnknownTagsSurviveARoundTrip) {
  ListOffsetsResponse r = full_response();
  r.unknown_tags = {RawTaggedField{0, {0x01}}, RawTaggedField{4, {}}};
  r.topics[0].partitions[0].unknown_tags = {RawTaggedField{2, {0xff, 0xfe}}};
  for (std::int16_t v = 6; v <= 7; ++v) expect_round_trip(r, v);
}

TEST(ListOffsets, VersionsOutsideTheRangeAreRefused) {
  const Bytes encoded = encode_body(full_request(), 1);
  for (std::int16_t v : {0, 8, 10}) {
    WireReader r(encoded);
    auto res = decode_body<ListOffsetsRequest>(r, v);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
  }
}

TEST(ListOffsets, NullTopicNameIsRefused) {
  Expect e(false);
  e.i32(4).array(1).null_str().array(0);
  WireReader r(e.bytes());
  auto res = decode_body<ListOffsetsResponse>(r, 2);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(res.error().field, "topics[0].name");
}

}  // namespace
}  // namespace pp
