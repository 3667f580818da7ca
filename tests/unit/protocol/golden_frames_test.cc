// Every captured frame (tests/golden/MANIFEST.tsv, from kcat, kafka-python,
// confluent-kafka and librdkafka's mock cluster) whose (api, version) we
// describe must decode whole, leave no byte over, and re-encode byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proxy/protocol/api_registry.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/all.h"

namespace pp {
namespace {

struct GoldenFrame {
  std::string path;
  std::int16_t api_key;
  std::int16_t api_version;
  bool request;
};

std::vector<GoldenFrame> manifest() {
  std::vector<GoldenFrame> out;
  std::ifstream in(std::string(PP_SOURCE_DIR) + "/tests/golden/MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string path, api, key, version, direction;
    std::getline(cols, path, '\t');
    std::getline(cols, api, '\t');
    std::getline(cols, key, '\t');
    std::getline(cols, version, '\t');
    std::getline(cols, direction, '\t');
    out.push_back({path, static_cast<std::int16_t>(std::stoi(key)), static_cast<std::int16_t>(std::stoi(version)),
                   direction == "request"});
  }
  return out;
}

Bytes read_hex(const std::string& path) {
  std::ifstream in(std::string(PP_SOURCE_DIR) + "/tests/golden/" + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out;
  std::string digits;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Returns whether the frame's API was described at that version.
template <class... Pairs>
bool check_body(ApiList<Pairs...>, const GoldenFrame& g, WireReader& r, ByteView body, bool& decoded_ok) {
  bool described = false;
  (([&] {
     using Req = typename Pairs::RequestType;
     using Resp = typename Pairs::ResponseType;
     if (static_cast<std::int16_t>(Req::kApiKey) != g.api_key || !Req::kVersions.contains(g.api_version)) return;
     described = true;
     auto check = [&](auto tag) {
       using T = decltype(tag);
       auto value = decode_body<T>(r, g.api_version);
       if (!value) {
         ADD_FAILURE() << g.path << ": " << value.error().describe();
         return;
       }
       decoded_ok = true;
       EXPECT_TRUE(r.empty()) << g.path << ": " << r.remaining() << " bytes left over";
       EXPECT_EQ(encode_body(*value, g.api_version), Bytes(body.begin(), body.end()))
           << g.path << ": re-encoding differs";
     };
     if (g.request) {
       check(Req{});
     } else {
       check(Resp{});
     }
   }()),
   ...);
  return described;
}

TEST(GoldenFrames, EveryDescribedCaptureDecodesWholeAndReencodesExactly) {
  const auto frames = manifest();
  ASSERT_GT(frames.size(), 100u) << "tests/golden/MANIFEST.tsv missing or short";
  int checked = 0;
  int malformed_refused = 0;
  int malformed_total = 0;
  for (const auto& g : frames) {
    const Bytes bytes = read_hex(g.path);
    WireReader r(bytes);
    if (g.request) {
      auto header = decode_request_header(r);
      ASSERT_TRUE(header.has_value()) << g.path;
      EXPECT_EQ(static_cast<std::int16_t>(header->header.api_key), g.api_key);
      EXPECT_EQ(header->header.api_version, g.api_version);
    } else {
      auto correlation = decode_response_header(r, static_cast<ApiKey>(g.api_key), g.api_version);
      ASSERT_TRUE(correlation.has_value()) << g.path;
    }
    const ByteView body = r.rest();
    // librdkafka 2.0.2's mock answers ApiVersions v3 with a malformed body
    // (PROVENANCE.md): it must be refused cleanly, not decoded. Real Kafka
    // 4.4.0's v3 answers (kafka_4_4_0_to_*) are well-formed and checked.
    const bool known_malformed =
        g.api_key == 18 && g.api_version == 3 && !g.request && g.path.find("/librdkafka_mock_to_") != std::string::npos;
    bool decoded_ok = false;
    if (known_malformed) {
      ++malformed_total;
      WireReader copy = r;
      auto value = decode_body<ApiVersionsResponse>(copy, 3);
      if (!value || !copy.empty()) ++malformed_refused;
      continue;
    }
    if (check_body(AllApis{}, g, r, body, decoded_ok) && decoded_ok) ++checked;
  }
  EXPECT_GT(checked, 300) << "fewer captured frames decoded than expected";
  EXPECT_EQ(malformed_refused, malformed_total) << "every librdkafka mock ApiVersions v3 answer must be refused";
  std::printf("golden frames checked: %d, malformed mock replies refused: %d\n", checked, malformed_refused);
}

// Apache Kafka 4.4.0 and the Java client (PROVENANCE.md, "Apache Kafka 4.4.0"):
// every (api, version) the capture holds must be described, so a newer
// version the real peers speak cannot silently drop out of the check above.
TEST(GoldenFrames, RealKafka4FramesAreAllDescribed) {
  int kafka4 = 0;
  for (const auto& g : manifest()) {
    if (g.path.find("java_kafka_clients_") == std::string::npos) continue;
    ++kafka4;
    const ApiSpec* spec = find_api(static_cast<ApiKey>(g.api_key));
    ASSERT_NE(spec, nullptr) << g.path;
    EXPECT_TRUE(spec->versions.contains(g.api_version)) << g.path << ": version not described";
  }
  EXPECT_GT(kafka4, 100);
}

template <class T>
T decode_golden(const std::string& path, std::int16_t version, bool request) {
  const Bytes bytes = read_hex(path);
  WireReader r(bytes);
  if (request) {
    EXPECT_TRUE(decode_request_header(r).has_value()) << path;
  } else {
    EXPECT_TRUE(decode_response_header(r, T::kApiKey, version).has_value()) << path;
  }
  auto value = decode_body<T>(r, version);
  EXPECT_TRUE(value.has_value()) << path;
  EXPECT_TRUE(r.empty()) << path;
  return value.value_or(T{});
}

// KIP-1102: Metadata v13 answers carry a top-level ErrorCode after the topics.
TEST(GoldenFrames, Kafka4MetadataV13HasTopLevelErrorCode) {
  const auto resp = decode_golden<MetadataResponse>(
      "metadata_response/v13/kafka_4_4_0_to_java_kafka_clients_4_4_0_idempotent_zstd.hex", 13, false);
  EXPECT_EQ(resp.error_code, ErrorCode::kNone);
  ASSERT_EQ(resp.topics.size(), 1u);
  EXPECT_EQ(resp.topics[0].name, "golden");
  EXPECT_EQ(resp.topics[0].partitions.size(), 2u);
  ASSERT_EQ(resp.brokers.size(), 1u);
  EXPECT_EQ(resp.brokers[0].node_id, 1);
}

// ApiVersions v5 requests name the cluster and node the client expects:
// null and -1 on the bootstrap connection, the real ones once it knows them.
TEST(GoldenFrames, Kafka4ApiVersionsV5CarriesClusterAndNode) {
  const auto bootstrap = decode_golden<ApiVersionsRequest>(
      "api_versions_request/v5/java_kafka_clients_4_4_0_idempotent_zstd.hex", 5, true);
  EXPECT_EQ(bootstrap.client_software_name, "apache-kafka-java");
  EXPECT_EQ(bootstrap.client_software_version, "4.4.0");
  EXPECT_EQ(bootstrap.cluster_id, std::nullopt);
  EXPECT_EQ(bootstrap.node_id, -1);
  const auto node = decode_golden<ApiVersionsRequest>(
      "api_versions_request/v5/java_kafka_clients_4_4_0_idempotent_zstd_2.hex", 5, true);
  EXPECT_TRUE(node.cluster_id.has_value() && !node.cluster_id->empty());
  EXPECT_EQ(node.node_id, 1);
}

}  // namespace
}  // namespace pp
