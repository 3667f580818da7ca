#include <gtest/gtest.h>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/frame.h"
#include "proxy/protocol/messages/all.h"

namespace pp {
namespace {

Bytes hex(std::string_view text) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
    i += 2;
  }
  return out;
}

TEST(RequestHeader, V1ForClassicV2ForFlexible) {
  EXPECT_EQ(request_header_version(ApiKey::kProduce, 8), 1);
  EXPECT_EQ(request_header_version(ApiKey::kProduce, 9), 2);
  EXPECT_EQ(response_header_version(ApiKey::kProduce, 9), 1);
  // KIP-511: the ApiVersions response header stays v0 so any client can read it.
  EXPECT_EQ(response_header_version(ApiKey::kApiVersions, 3), 0);
  EXPECT_EQ(request_header_version(ApiKey::kApiVersions, 3), 2);
}

TEST(RequestHeader, ClientIdKeepsClassicEncodingInV2) {
  Bytes out;
  WireWriter w(out);
  encode_request_header(w, RequestHeader{ApiKey::kMetadata, 9, 0x01020304, std::string("ab"), {}});
  // key 3, version 9, correlation, int16 length 2 "ab", empty tag section.
  EXPECT_EQ(out, hex("0003 0009 01020304 0002 6162 00"));
  WireReader r(out);
  auto decoded = decode_request_header(r);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->flexible_known);
  EXPECT_EQ(decoded->header.client_id, "ab");
  EXPECT_TRUE(r.empty());
}

TEST(RequestHeader, NullClientIdAndUnknownApi) {
  const Bytes bytes = hex("0063 0001 00000007 ffff");
  WireReader r(bytes);
  auto decoded = decode_request_header(r);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_FALSE(decoded->flexible_known);
  EXPECT_EQ(decoded->header.correlation_id, 7);
  EXPECT_FALSE(decoded->header.client_id.has_value());
}

TEST(RequestHeader, TruncatedHeaderNamesTheField) {
  const Bytes bytes = hex("0000 0003 0000");
  WireReader r(bytes);
  auto decoded = decode_request_header(r);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().field, "correlation_id");
  EXPECT_EQ(decoded.error().offset, 4u);
}

TEST(Codec, ApiVersionsV3ResponseFrame) {
  ApiVersionsResponse resp;
  resp.api_keys.push_back({0, 0, 9, {}});
  const Bytes frame_bytes = encode_response_frame(5, 3, resp);
  // size, correlation (no header tags), error 0, compact array of 1, key 0 min 0 max 9 + tags,
  // throttle 0, tags.
  EXPECT_EQ(frame_bytes, hex("00000013 00000005 0000 02 0000 0000 0009 00 00000000 00"));
}

TEST(Codec, ProduceV14WindowTagIsWrittenOnlyWhenNotFive) {
  ProduceResponse resp;
  ProduceTopicResponse topic;
  ProducePartitionResponse part;
  part.producer_state_batches_to_retain = 20;
  topic.partition_responses.push_back(part);
  resp.responses.push_back(topic);
  const Bytes with_tag = encode_body(resp, 14);
  // ... partition tag section: 1 tag, tag 1, size 4, int32 20 (docs/design/PIPELINE.md B).
  const Bytes expected_tail = hex("01 01 04 00000014");
  ASSERT_GE(with_tag.size(), expected_tail.size());
  EXPECT_TRUE(std::search(with_tag.begin(), with_tag.end(), expected_tail.begin(), expected_tail.end()) !=
              with_tag.end());
  resp.responses[0].partition_responses[0].producer_state_batches_to_retain = 5;
  const Bytes without = encode_body(resp, 14);
  EXPECT_EQ(without.size() + 6, with_tag.size());
  WireReader r(without);
  auto decoded = decode_body<ProduceResponse>(r, 14);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->responses[0].partition_responses[0].producer_state_batches_to_retain, 5);
}

TEST(FrameReader, ReassemblesAcrossArbitraryChunks) {
  Bytes stream;
  for (int i = 0; i < 3; ++i) {
    Bytes f = frame(Bytes(static_cast<std::size_t>(10 * i + 1), static_cast<std::uint8_t>(i)));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    FrameReader reader(1024);
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      ASSERT_TRUE(reader.append(ByteView(stream).subspan(at, std::min(chunk, stream.size() - at))));
    }
    for (int i = 0; i < 3; ++i) {
      auto f = reader.pop();
      ASSERT_TRUE(f.has_value());
      EXPECT_EQ(f->size(), static_cast<std::size_t>(10 * i + 1));
    }
    EXPECT_FALSE(reader.pop().has_value());
    EXPECT_EQ(reader.buffered_bytes(), 0u);
  }
}

TEST(FrameReader, RefusesOversizeFromThePrefixAlone) {
  FrameReader reader(100);
  // Only the size prefix arrives: the frame is refused before any body is buffered.
  auto res = reader.append(hex("00000065"));
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kTooLarge);
  EXPECT_EQ(reader.buffered_bytes(), 0u);
  EXPECT_FALSE(reader.append(hex("00")).has_value()) << "a failed stream stays failed";
}

TEST(FrameReader, RefusesNegativeSize) {
  FrameReader reader(100);
  auto res = reader.append(hex("ffffffff"));
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kNegativeLength);
}

}  // namespace
}  // namespace pp
