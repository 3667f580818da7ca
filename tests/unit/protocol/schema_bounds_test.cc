// Hostile lengths and counts are refused before anything is allocated for them.
#include <gtest/gtest.h>

#include "proxy/protocol/messages/all.h"

namespace pp {
namespace {

TEST(SchemaBounds, ArrayCountBeyondWhatTheBytesCanHoldIsRefused) {
  // Produce v3: transactional_id null, acks, timeout, then topic_data with a
  // count of 1000 but only 100 bytes behind it: each topic needs at least a
  // 2-byte name length and a 4-byte partition count, so 17 topics at most.
  Bytes body;
  WireWriter w(body);
  w.int16(-1);
  w.int16(-1);
  w.int32(1000);
  w.int32(1000);
  body.resize(body.size() + 100, 0);
  WireReader r(body);
  auto decoded = decode_body<ProduceRequest>(r, 3);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kLengthTooLarge);
  EXPECT_EQ(decoded.error().field, "topic_data");
}

TEST(SchemaBounds, MinimumWireSizeFollowsTheVersion) {
  // Produce v3 topic: name (int16) + partition array (int32).
  EXPECT_EQ(min_wire_size<ProduceTopicData>(SchemaContext{3, false}), 6u);
  // v13: topic id (16) + compact array (1) + tag section (1).
  EXPECT_EQ(min_wire_size<ProduceTopicData>(SchemaContext{13, true}), 18u);
}

TEST(SchemaBounds, NegativeLengthsAreRefusedWithTheFieldName) {
  Bytes body;
  WireWriter w(body);
  w.int16(-1);  // acks
  w.int32(0);   // timeout
  w.int32(1);   // one topic
  w.int16(-5);  // name length -5
  w.int32(0);   // the partition count that would follow
  WireReader r(body);
  auto decoded = decode_body<ProduceRequest>(r, 0);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(decoded.error().field, "topic_data[0].name");
  EXPECT_EQ(decoded.error().offset, 12u);
}

}  // namespace
}  // namespace pp
