// Fetch v4-v12 (proxy/protocol/messages/fetch.h). The expected bytes below are
// written out field by field from FetchRequest.json / FetchResponse.json, not
// derived from the schema, so a wrong version range in fetch.h shows up here.
#include "proxy/protocol/messages/fetch.h"

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

const Bytes kBatch = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff, 2, 1, 2, 3, 4};

FetchRequest full_request() {
  FetchRequest r;
  r.cluster_id = "cluster-a";
  r.replica_id = 3;
  r.max_wait_ms = 500;
  r.min_bytes = 1;
  r.max_bytes = 52428800;
  r.isolation_level = 1;
  r.session_id = 0x01020304;
  r.session_epoch = 7;
  FetchPartition p;
  p.partition = 2;
  p.current_leader_epoch = 11;
  p.fetch_offset = 0x0102030405060708;
  p.last_fetched_epoch = 10;
  p.log_start_offset = 42;
  p.partition_max_bytes = 1048576;
  r.topics = {FetchTopic{"orders", {p}, {}}};
  r.forgotten_topics_data = {FetchForgottenTopic{"gone", {0, 5}, {}}};
  r.rack_id = "rack-b";
  return r;
}

Bytes expected_request(std::int16_t v) {
  const bool flex = v >= 12;
  Expect e(flex);
  e.i32(3).i32(500).i32(1).i32(52428800).i8(1);
  if (v >= 7) e.i32(0x01020304).i32(7);
  e.array(1).str("orders").array(1).i32(2);
  if (v >= 9) e.i32(11);
  e.i64(0x0102030405060708);
  if (v >= 12) e.i32(10);
  if (v >= 5) e.i64(42);
  e.i32(1048576).no_tags().no_tags();
  if (v >= 7) e.array(1).str("gone").array(2).i32(0).i32(5).no_tags();
  if (v >= 11) e.str("rack-b");
  // ClusterId, tag 0: a compact nullable string "cluster-a" (10 bytes).
  if (flex) {
    e.uvarint(1).uvarint(0).uvarint(10);
    e.str("cluster-a");  // compact: length 9 + 1 = 10, then the 9 bytes
  }
  return e.bytes();
}

FetchResponse full_response() {
  FetchResponse r;
  r.throttle_time_ms = 25;
  r.error_code = ErrorCode::kInvalidFetchSessionEpoch;
  r.session_id = 99;
  FetchPartitionData p;
  p.partition_index = 2;
  p.error_code = ErrorCode::kNotLeaderOrFollower;
  p.high_watermark = 5000;
  p.last_stable_offset = 4990;
  p.log_start_offset = 100;
  p.diverging_epoch = {5, 4000, {}};
  p.current_leader = {4, 6, {}};
  p.snapshot_id = {3000, 3, {}};
  p.aborted_transactions = std::vector<FetchAbortedTransaction>{{ProducerId{77}, 4500, {}}};
  p.preferred_read_replica = 1;
  p.records.data = ByteView(kBatch);
  r.responses = {FetchableTopicResponse{"orders", {p}, {}}};
  return r;
}

Bytes expected_response(std::int16_t v, bool nulls) {
  const bool flex = v >= 12;
  Expect e(flex);
  e.i32(25);
  if (v >= 7) e.i16(71).i32(99);
  e.array(1).str("orders").array(1).i32(2).i16(6).i64(5000).i64(4990);
  if (v >= 5) e.i64(100);
  if (nulls) {
    e.null_array();
  } else {
    e.array(1).i64(77).i64(4500).no_tags();
  }
  if (v >= 11) e.i32(1);
  if (nulls) {
    e.null_bytes();
  } else {
    e.bytes(kBatch);
  }
  if (flex) {
    e.uvarint(3);
    e.uvarint(0).uvarint(13).i32(5).i64(4000).no_tags();  // DivergingEpoch
    e.uvarint(1).uvarint(9).i32(4).i32(6).no_tags();      // CurrentLeader
    e.uvarint(2).uvarint(13).i64(3000).i32(3).no_tags();  // SnapshotId
  }
  e.no_tags().no_tags();
  return e.bytes();
}

// ---- tests ----

TEST(Fetch, VersionRange) {
  EXPECT_EQ(FetchRequest::kApiKey, ApiKey::kFetch);
  EXPECT_EQ(FetchRequest::kVersions.min, 4);
  EXPECT_EQ(FetchRequest::kVersions.max, 12);
  EXPECT_EQ(FetchResponse::kVersions.min, 4);
  EXPECT_EQ(FetchResponse::kVersions.max, 12);
  EXPECT_EQ(FetchRequest::kFlexibleSince, 12);
  EXPECT_EQ(FetchResponse::kFlexibleSince, 12);
}

TEST(Fetch, RequestEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 4; v <= 12; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const FetchRequest value = at_version(full_request(), v);
    expect_all_set(value, v, "FetchRequest");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_request(v)));
    expect_mutations_safe<FetchRequest>(encoded, v);
  }
}

TEST(Fetch, ResponseEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 4; v <= 12; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const FetchResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "FetchResponse");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_response(v, false)));
    expect_mutations_safe<FetchResponse>(encoded, v);
  }
}

TEST(Fetch, NullRecordsAndAbortedTransactions) {
  FetchResponse r = full_response();
  r.responses[0].partitions[0].records.data.reset();
  r.responses[0].partitions[0].aborted_transactions.reset();
  for (std::int16_t v = 4; v <= 12; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const Bytes encoded = expect_round_trip(at_version(r, v), v);
    EXPECT_EQ(hex(encoded), hex(expected_response(v, true)));
  }
}

TEST(Fetch, NullClusterIdIsNotWritten) {
  FetchRequest r = full_request();
  r.cluster_id.reset();
  const Bytes encoded = expect_round_trip(r, 12);
  ASSERT_FALSE(encoded.empty());
  EXPECT_EQ(encoded.back(), 0x00) << "top-level tag section must be empty";
  // An empty cluster id is not the default (null), so it is written: tag 0, 1 byte, "".
  r.cluster_id = "";
  const Bytes empty_id = expect_round_trip(r, 12);
  EXPECT_EQ(hex(ByteView(empty_id).last(4)), "01000101");
}

TEST(Fetch, DefaultPartitionTagsAreNotWritten) {
  FetchResponse r = full_response();
  auto& p = r.responses[0].partitions[0];
  p.diverging_epoch = {};
  p.current_leader = {};
  p.snapshot_id = {};
  const Bytes encoded = expect_round_trip(r, 12);
  // ... records, then partition, topic and top-level tag sections, all empty.
  EXPECT_EQ(hex(ByteView(encoded).last(kBatch.size() + 3)), hex(kBatch) + "000000");

  // Only the tag that differs from its default is written.
  p.current_leader.leader_epoch = 8;
  const Bytes one = expect_round_trip(r, 12);
  EXPECT_EQ(hex(ByteView(one).last(14)), unspaced("01 01 09 ffffffff 00000008 00 00 00"));
}

TEST(Fetch, TagsWrittenAtTheirDefaultStillDecode) {
  // A peer may write a tag at its default value; it decodes to the default.
  Expect e(true);
  e.i32(0).i16(0).i32(0).array(1).str("t").array(1).i32(0).i16(0).i64(0).i64(-1).i64(-1);
  e.array(0).i32(-1).null_bytes();
  e.uvarint(1).uvarint(1).uvarint(9).i32(-1).i32(-1).no_tags();
  e.no_tags().no_tags();
  WireReader r(e.bytes());
  auto decoded = decode_body<FetchResponse>(r, 12);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(decoded->responses.at(0).partitions.at(0).current_leader, FetchLeaderIdAndEpoch{});
}

TEST(Fetch, UnknownTagsSurviveARoundTrip) {
  FetchResponse r = full_response();
  r.unknown_tags = {RawTaggedField{5, {0xaa}}};
  r.responses[0].partitions[0].unknown_tags = {RawTaggedField{7, {0x01, 0x02}}};
  r.responses[0].partitions[0].current_leader.unknown_tags = {RawTaggedField{3, {}}};
  expect_round_trip(r, 12);

  FetchRequest q = full_request();
  q.unknown_tags = {RawTaggedField{1, {0x00}}};  // ReplicaState's tag (v15+) is unknown at v12
  q.topics[0].partitions[0].unknown_tags = {RawTaggedField{0, {0x09}}};
  expect_round_trip(q, 12);
}

TEST(Fetch, VersionsOutsideTheRangeAreRefused) {
  const Bytes encoded = encode_body(full_request(), 12);
  for (std::int16_t v : {0, 3, 13, 17}) {
    WireReader r(encoded);
    auto res = decode_body<FetchRequest>(r, v);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
    WireReader r2(encoded);
    EXPECT_FALSE(decode_body<FetchResponse>(r2, v).has_value());
  }
}

TEST(Fetch, NullTopicNameIsRefused) {
  // Topic names are not nullable: a -1 length must be an error, not "".
  Expect e(false);
  e.i32(-1).i32(0).i32(0).i32(0).i8(0).array(1).null_str().array(0);
  WireReader r(e.bytes());
  auto res = decode_body<FetchRequest>(r, 4);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().field, "topics[0].topic");
}

}  // namespace
}  // namespace pp
