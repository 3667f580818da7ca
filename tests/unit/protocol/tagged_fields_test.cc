// Tagged-field sections (KIP-482) from a peer: tags must strictly increase,
// unknown ones are capped per section, and decoding is one pass (issue 14: a
// header of 200,000 tags in decreasing order froze the loop for 20 s).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/all.h"

namespace pp {
namespace {

// An ApiVersions v3 request header (v2) whose tagged-field section holds
// `tags`, each with a one-byte payload equal to the tag's low byte.
Bytes header_with_tags(const std::vector<std::uint32_t>& tags) {
  Bytes out;
  WireWriter w(out);
  w.int16(static_cast<std::int16_t>(ApiKey::kApiVersions));
  w.int16(3);
  w.int32(42);
  w.int16(2);
  w.raw(std::string_view("id"));
  w.uvarint(static_cast<std::uint32_t>(tags.size()));
  for (std::uint32_t t : tags) {
    w.uvarint(t);
    w.uvarint(1);
    w.int8(static_cast<std::int8_t>(t & 0xff));
  }
  return out;
}

// The byte offset of the i-th tag of header_with_tags(tags).
std::size_t tag_offset(const std::vector<std::uint32_t>& tags, std::size_t i) {
  // The count's varint has the same width for the counts used here (< 128).
  return header_with_tags(std::vector<std::uint32_t>(tags.begin(), tags.begin() + static_cast<std::ptrdiff_t>(i)))
      .size();
}

std::vector<std::uint32_t> increasing(std::uint32_t n) {
  std::vector<std::uint32_t> tags;
  for (std::uint32_t t = 0; t < n; ++t) tags.push_back(t);
  return tags;
}

TEST(TaggedFields, IncreasingUnknownTagsAreKeptInOrderAndRoundTrip) {
  const std::vector<std::uint32_t> tags{0, 5, 300};
  const Bytes wire = header_with_tags(tags);
  WireReader r(wire);
  auto decoded = decode_request_header(r);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  const RawTaggedFields& got = decoded->header.unknown_tags;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].tag, 0u);
  EXPECT_EQ(got[1].tag, 5u);
  EXPECT_EQ(got[2].tag, 300u);
  EXPECT_EQ(got[2].data, Bytes{300 & 0xff});
  Bytes again;
  WireWriter w(again);
  encode_request_header(w, decoded->header);
  EXPECT_EQ(again, wire);
}

TEST(TaggedFields, DecreasingTagsAreRefusedAtTheFirstOutOfOrderTag) {
  const std::vector<std::uint32_t> tags{7, 3};
  const Bytes wire = header_with_tags(tags);
  WireReader r(wire);
  auto decoded = decode_request_header(r);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kOutOfOrder);
  EXPECT_EQ(decoded.error().field, "header._tagged_fields");
  EXPECT_EQ(decoded.error().offset, tag_offset(tags, 1));
  EXPECT_EQ(decoded.error().describe(), "field 'header._tagged_fields' at offset " +
                                            std::to_string(tag_offset(tags, 1)) +
                                            ": tags not in strictly increasing order");
}

TEST(TaggedFields, ARepeatedTagIsOutOfOrder) {
  const std::vector<std::uint32_t> tags{4, 4};
  const Bytes wire = header_with_tags(tags);
  WireReader reader(wire);
  auto decoded = decode_request_header(reader);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kOutOfOrder);
}

TEST(TaggedFields, ARepeatedKnownTagCannotOverwriteTheField) {
  // ApiVersionsResponse v3 knows tags 0-3; FinalizedFeaturesEpoch (1) twice.
  Bytes body;
  WireWriter w(body);
  w.int16(0);    // error_code
  w.uvarint(1);  // api_keys: empty compact array
  w.int32(0);    // throttle_time_ms
  w.uvarint(2);
  for (int i = 0; i < 2; ++i) {
    w.uvarint(1);
    w.uvarint(8);
    w.int64(100 + i);
  }
  WireReader r(body);
  auto decoded = decode_body<ApiVersionsResponse>(r, 3);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kOutOfOrder);
  EXPECT_EQ(decoded.error().field, "_tagged_fields");
}

TEST(TaggedFields, UpToTheCapOfUnknownTagsIsAccepted) {
  const auto tags = increasing(static_cast<std::uint32_t>(kMaxUnknownTaggedFields));
  const Bytes wire = header_with_tags(tags);
  WireReader r(wire);
  auto decoded = decode_request_header(r);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_EQ(decoded->header.unknown_tags.size(), kMaxUnknownTaggedFields);
}

TEST(TaggedFields, OneUnknownTagOverTheCapIsRefusedWhereItStarts) {
  const auto tags = increasing(static_cast<std::uint32_t>(kMaxUnknownTaggedFields + 1));
  const Bytes wire = header_with_tags(tags);
  WireReader r(wire);
  auto decoded = decode_request_header(r);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kTooMany);
  EXPECT_EQ(decoded.error().field, "header._tagged_fields");
  EXPECT_EQ(decoded.error().offset, tag_offset(tags, kMaxUnknownTaggedFields));
}

TEST(TaggedFields, TheIssuesHeaderOf200000DecreasingTagsStopsAtTheSecondTag) {
  std::vector<std::uint32_t> tags;
  for (std::uint32_t t = 200000; t > 0; --t) tags.push_back(t);
  const Bytes wire = header_with_tags(tags);
  ASSERT_GT(wire.size(), 800000u);
  WireReader r(wire);
  auto decoded = decode_request_header(r);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().kind, DecodeErrorKind::kOutOfOrder);
  EXPECT_LT(decoded.error().offset, 32u);  // the second tag, not the 200,000th
}

TEST(TaggedFields, KnownTagsStillDecodeBesideUnknownOnes) {
  // ApiVersionsResponse v3 knows tags 0-3; 9 is unknown to it.
  Bytes body;
  WireWriter w(body);
  w.int16(0);
  w.uvarint(1);
  w.int32(0);
  w.uvarint(2);
  w.uvarint(1);  // FinalizedFeaturesEpoch
  w.uvarint(8);
  w.int64(77);
  w.uvarint(9);  // unknown
  w.uvarint(0);
  WireReader r(body);
  auto decoded = decode_body<ApiVersionsResponse>(r, 3);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_EQ(decoded->finalized_features_epoch, 77);
  ASSERT_EQ(decoded->unknown_tags.size(), 1u);
  EXPECT_EQ(decoded->unknown_tags[0].tag, 9u);
}

}  // namespace
}  // namespace pp
