// The Java 4.4 client's Produce v13 requests as it sent them to produce-proxy
// (tests/golden/produce_request/v13/*_via_proxy_*, captured by
// capture/capture_proxy_v13.sh; PROVENANCE.md), replayed into the front end
// over a socket: the topic id the client names is the one the proxy's
// Metadata handed it, each partition's records reach the sink under the
// topic's name, and the answer equals, byte for byte, the one the proxy gave
// the client in the capture when the sink reports the same offsets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend_test_support.h"
#include "mini_json.h"

namespace pp {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(PP_SOURCE_DIR) / "tests/golden";

Bytes read_hex(const fs::path& path) {
  std::ifstream in(path);
  std::string digits;
  for (char c; in.get(c);) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  Bytes out;
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "1ffcaed7-996b-43b1-8e56-530d2b03d7cf" as the capture decoder prints ids.
Uuid parse_dashed(std::string_view text) {
  Uuid id;
  std::size_t at = 0;
  for (char c : text) {
    if (c == '-') continue;
    const int nibble = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10;
    if (at / 2 >= id.bytes.size()) break;
    id.bytes[at / 2] = static_cast<std::uint8_t>(id.bytes[at / 2] << 4 | nibble);
    ++at;
  }
  return id;
}

std::vector<fs::path> via_proxy(const std::string& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(kGolden / dir)) return out;
  for (const auto& entry : fs::directory_iterator(kGolden / dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".hex" && name.find("_via_proxy_") != std::string::npos) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Bytes with_size_prefix(const Bytes& frame) {
  Bytes out;
  const auto n = static_cast<std::uint32_t>(frame.size());
  out.push_back(static_cast<std::uint8_t>(n >> 24));
  out.push_back(static_cast<std::uint8_t>(n >> 16));
  out.push_back(static_cast<std::uint8_t>(n >> 8));
  out.push_back(static_cast<std::uint8_t>(n));
  out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

using GoldenProxyV13 = test::FrontendFixture;

TEST_F(GoldenProxyV13, TheJava44ClientsRequestsAreServedAndAnsweredAsInTheCapture) {
  const auto requests = via_proxy("produce_request/v13");
  ASSERT_GE(requests.size(), 2u) << "capture/capture_proxy_v13.sh writes one per case";
  start();
  for (const fs::path& hex : requests) {
    SCOPED_TRACE(hex.filename().string());
    fs::path json_path = hex;
    auto doc = test::JsonParser(read_text(json_path.replace_extension(".json"))).parse();
    ASSERT_TRUE(doc);
    const test::Json& partitions = (*doc)["produce"]["partitions"];
    ASSERT_FALSE(partitions.array.empty());
    const Uuid id = parse_dashed(partitions.array[0]["topic_id"].string);
    ASSERT_FALSE(id.is_zero());
    directory_->table.clear();
    directory_->add("golden", 2, id);

    const Bytes captured_answer = read_hex(kGolden / (*doc)["pair"].string);
    WireReader answer_reader(captured_answer);
    std::int32_t correlation = -1;
    {
      auto header = decode_response_header(answer_reader, ApiKey::kProduce, kProduceTopicIdVersion);
      ASSERT_TRUE(header);
      correlation = *header;
    }
    auto captured = decode_body<ProduceResponse>(answer_reader, kProduceTopicIdVersion);
    ASSERT_TRUE(captured) << captured.error().describe();
    ASSERT_EQ(captured->responses.size(), 1u);
    EXPECT_EQ(captured->responses[0].topic_id, id) << "the proxy answered by the client's id";

    const std::size_t first = sink_.submissions.size();
    auto client = connect();
    ASSERT_TRUE(client->write_raw(with_size_prefix(read_hex(hex))));
    ASSERT_TRUE(wait_for_submissions(first + partitions.array.size()));
    for (std::size_t i = 0; i < partitions.array.size(); ++i) {
      test::FakeSink::Submission& s = sink_.submissions[first + i];
      EXPECT_EQ(s.topic, "golden");
      EXPECT_EQ(s.partition, static_cast<std::int32_t>(partitions.array[i]["partition"].number));
      EXPECT_EQ(s.run.records.size(), partitions.array[i]["records"].array.size());
      const ProducePartitionResponse& p = captured->responses[0].partition_responses.at(i);
      ASSERT_EQ(p.index, s.partition);
      ASSERT_EQ(p.error_code, ErrorCode::kNone);
      sink_.complete(first + i, p.base_offset);
    }
    auto frame = client->read_frame();
    ASSERT_TRUE(frame);
    std::int32_t ours_correlation = -1;
    auto ours = test::decode_response<ProduceResponse>(*frame, kProduceTopicIdVersion, &ours_correlation);
    ASSERT_TRUE(ours);
    EXPECT_EQ(ours_correlation, correlation);
    EXPECT_TRUE(*ours == *captured) << "the answer differs from the captured one";
    EXPECT_EQ(*frame, captured_answer) << "the answer's bytes differ from the captured ones";
  }
}

// What the client was told before it produced: Produce up to v13 in
// ApiVersions, and the topic's id in Metadata, the id its Produce named.
TEST(GoldenProxyV13Capture, TheProxyOfferedV13AndHandedOutTheIdTheClientUsed) {
  const auto api_versions = via_proxy("api_versions_response/v5");
  ASSERT_FALSE(api_versions.empty());
  for (const fs::path& hex : api_versions) {
    SCOPED_TRACE(hex.filename().string());
    const Bytes frame = read_hex(hex);
    WireReader r(frame);
    ASSERT_TRUE(decode_response_header(r, ApiKey::kApiVersions, 5));
    auto response = decode_body<ApiVersionsResponse>(r, 5);
    ASSERT_TRUE(response);
    bool produce_listed = false;
    for (const ApiVersionRange& range : response->api_keys) {
      if (range.api_key != static_cast<std::int16_t>(ApiKey::kProduce)) continue;
      produce_listed = true;
      EXPECT_EQ(range.min_version, 0);
      EXPECT_EQ(range.max_version, kProduceTopicIdVersion);
    }
    EXPECT_TRUE(produce_listed);
  }
  const auto metadata = via_proxy("metadata_response/v13");
  const auto produce = via_proxy("produce_request/v13");
  ASSERT_FALSE(metadata.empty());
  ASSERT_FALSE(produce.empty());
  for (const fs::path& hex : metadata) {
    SCOPED_TRACE(hex.filename().string());
    const Bytes frame = read_hex(hex);
    WireReader r(frame);
    ASSERT_TRUE(decode_response_header(r, ApiKey::kMetadata, 13));
    auto response = decode_body<MetadataResponse>(r, 13);
    ASSERT_TRUE(response);
    for (const MetadataResponseTopic& t : response->topics) {
      if (t.name != std::string("golden")) continue;
      EXPECT_FALSE(t.topic_id.is_zero());
      // Every case's Produce named the topic by this id (one topic, one id).
      bool named = false;
      for (const fs::path& request : produce) {
        const Bytes bytes = read_hex(request);
        WireReader rr(bytes);
        ASSERT_TRUE(decode_request_header(rr));
        auto body = decode_body<ProduceRequest>(rr, kProduceTopicIdVersion);
        ASSERT_TRUE(body);
        named = named || body->topic_data.at(0).topic_id == t.topic_id;
      }
      EXPECT_TRUE(named);
    }
  }
}

}  // namespace
}  // namespace pp
