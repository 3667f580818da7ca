// Produce v13 (KIP-516; ProduceRequest.json / ProduceResponse.json): each
// topic is its 16-byte TopicId, with no Name, in the request and in the
// response; v12 is the other way round. Checked byte by byte, and against a
// real Java 4.4.0 request whose id the capture's own decoder printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {
namespace {

Uuid test_id() {
  Uuid id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(0xa0 + i);
  return id;
}

ByteView text(std::string_view s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

bool contains(const Bytes& haystack, ByteView needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

TEST(ProduceTopicId, V13RequestCarriesTheIdAndNoNameAndRoundTrips) {
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 30000;
  ProduceTopicData& topic = request.topic_data.emplace_back();
  topic.name = "by-name";
  topic.topic_id = test_id();
  topic.partition_data.emplace_back().index = 2;

  const Bytes v13 = encode_body(request, kProduceTopicIdVersion);
  // transactional_id null (1), acks (2), timeout (4), one topic (1), then the id.
  ASSERT_GE(v13.size(), 8u + 16u);
  EXPECT_TRUE(std::equal(topic.topic_id.bytes.begin(), topic.topic_id.bytes.end(), v13.begin() + 8));
  EXPECT_FALSE(contains(v13, text("by-name")));
  WireReader r(v13);
  auto decoded = decode_body<ProduceRequest>(r, kProduceTopicIdVersion);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  ASSERT_EQ(decoded->topic_data.size(), 1u);
  EXPECT_EQ(decoded->topic_data[0].topic_id, test_id());
  EXPECT_EQ(decoded->topic_data[0].name, "");
  EXPECT_EQ(decoded->topic_data[0].partition_data.at(0).index, 2);
  EXPECT_EQ(encode_body(*decoded, kProduceTopicIdVersion), v13);

  const Bytes v12 = encode_body(request, kProduceTopicIdVersion - 1);
  EXPECT_TRUE(contains(v12, text("by-name")));
  EXPECT_FALSE(contains(v12, ByteView(topic.topic_id.bytes)));
}

TEST(ProduceTopicId, V13ResponseCarriesTheIdAndNoName) {
  ProduceResponse response;
  ProduceTopicResponse& topic = response.responses.emplace_back();
  topic.name = "by-name";
  topic.topic_id = test_id();
  ProducePartitionResponse& p = topic.partition_responses.emplace_back();
  p.index = 1;
  p.error_code = ErrorCode::kUnknownTopicId;
  p.base_offset = -1;

  const Bytes v13 = encode_body(response, kProduceTopicIdVersion);
  // One topic (1), then the id.
  EXPECT_TRUE(std::equal(topic.topic_id.bytes.begin(), topic.topic_id.bytes.end(), v13.begin() + 1));
  EXPECT_FALSE(contains(v13, text("by-name")));
  WireReader r(v13);
  auto decoded = decode_body<ProduceResponse>(r, kProduceTopicIdVersion);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(decoded->responses.at(0).topic_id, test_id());
  EXPECT_EQ(decoded->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kUnknownTopicId);
}

TEST(ProduceTopicId, AJava44RequestDecodesToTheIdItsCaptureRecorded) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(PP_SOURCE_DIR) / "tests/golden/produce_request/v13";
  std::ifstream hex_in(dir / "java_kafka_clients_4_4_0_idempotent_none_headers.hex");
  std::string digits;
  for (char c; hex_in.get(c);) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  Bytes frame;
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    frame.push_back(static_cast<std::uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  std::ifstream json_in(dir / "java_kafka_clients_4_4_0_idempotent_none_headers.json");
  const std::string json((std::istreambuf_iterator<char>(json_in)), std::istreambuf_iterator<char>());
  WireReader r(frame);
  auto header = decode_request_header(r);
  ASSERT_TRUE(header);
  ASSERT_EQ(header->header.api_version, kProduceTopicIdVersion);
  auto request = decode_body<ProduceRequest>(r, kProduceTopicIdVersion);
  ASSERT_TRUE(request) << request.error().describe();
  ASSERT_FALSE(request->topic_data.empty());
  std::string dashed;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) dashed.push_back('-');
    static constexpr char kHex[] = "0123456789abcdef";
    dashed.push_back(kHex[request->topic_data[0].topic_id.bytes[i] >> 4]);
    dashed.push_back(kHex[request->topic_data[0].topic_id.bytes[i] & 0xf]);
  }
  EXPECT_NE(json.find("\"topic_id\": \"" + dashed + "\""), std::string::npos) << dashed;
  EXPECT_EQ(request->topic_data[0].name, "");
}

}  // namespace
}  // namespace pp
