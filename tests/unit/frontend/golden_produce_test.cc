// Every Produce request captured from a real client (tests/golden/
// produce_request/, see tests/golden/PROVENANCE.md) goes through the front
// end's Produce-to-runs conversion: the runs must hold exactly the records
// the capture tooling decoded independently (the .json next to each .hex).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "mini_json.h"
#include "proxy/frontend/api_versions_answer.h"
#include "proxy/frontend/produce_conversion.h"
#include "proxy/protocol/header.h"

namespace pp {
namespace {

namespace fs = std::filesystem;

Bytes read_hex(const fs::path& path) {
  std::ifstream in(path);
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

std::optional<std::string> as_string(const std::optional<ByteView>& v) {
  if (!v) return std::nullopt;
  return std::string(v->begin(), v->end());
}

std::optional<std::string> json_string(const test::Json& j) {
  if (j.is_null()) return std::nullopt;
  return j.string;
}

// A topic id as the capture decoder prints it: 8-4-4-4-12 lowercase hex.
std::string dashed(const Uuid& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[id.bytes[i] >> 4]);
    out.push_back(kHex[id.bytes[i] & 0xf]);
  }
  return out;
}

std::vector<fs::path> golden_requests() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(PP_SOURCE_DIR) / "tests/golden/produce_request";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() == ".hex") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GoldenProduceRequests, EveryCapturedRequestConvertsToTheRecordsTheClientSent) {
  const auto files = golden_requests();
  ASSERT_GE(files.size(), 40u);
  std::size_t records_checked = 0;
  for (const fs::path& hex : files) {
    SCOPED_TRACE(hex.string());
    fs::path json_path = hex;
    json_path.replace_extension(".json");
    std::ifstream in(json_path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string json_text = text.str();
    auto facts = test::JsonParser(json_text).parse();
    ASSERT_TRUE(facts);
    const test::Json& produce = (*facts)["produce"];

    auto frame = std::make_shared<const Bytes>(read_hex(hex));
    WireReader r(*frame);
    auto header = decode_request_header(r);
    ASSERT_TRUE(header) << header.error().describe();
    const std::int16_t version = header->header.api_version;
    // The front end serves Produce up to kFrontendMaxProduceVersion and
    // refuses anything newer before conversion.
    if (version > kFrontendMaxProduceVersion) continue;
    auto request = decode_body<ProduceRequest>(r, version);
    ASSERT_TRUE(request) << request.error().describe();
    EXPECT_EQ(request->acks, static_cast<std::int16_t>(produce["acks"].number));
    // v13 names topics by id: the capture's own decoder printed each id; the
    // directory here knows exactly those, as topic "golden".
    name_topics_by_id(*request, version, [&](const Uuid& id) -> std::optional<std::string> {
      for (const test::Json& p : produce["partitions"].array) {
        if (p["topic_id"].string == dashed(id)) return "golden";
      }
      return std::nullopt;
    });

    ProduceConversion converted = convert_produce_request(*request, version, frame);
    frame.reset();  // the runs must keep what they point into alive
    const auto& expected = produce["partitions"].array;
    ASSERT_EQ(converted.partitions.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const PartitionProduce& got = converted.partitions[i];
      const test::Json& want = expected[i];
      EXPECT_EQ(got.topic, version >= kProduceTopicIdVersion ? std::string("golden") : want["topic"].string);
      EXPECT_EQ(got.partition, static_cast<std::int32_t>(want["partition"].number));
      ASSERT_EQ(got.error, ErrorCode::kNone) << got.error_message;
      const auto& records = want["records"].array;
      ASSERT_EQ(got.run.records.size(), records.size());
      for (std::size_t k = 0; k < records.size(); ++k) {
        const RunRecord& rec = got.run.records[k];
        EXPECT_EQ(as_string(rec.key), json_string(records[k]["key"])) << "record " << k;
        EXPECT_EQ(as_string(rec.value), json_string(records[k]["value"])) << "record " << k;
        const auto& headers = records[k]["headers"].array;
        ASSERT_EQ(rec.headers.size(), headers.size());
        for (std::size_t h = 0; h < headers.size(); ++h) {
          EXPECT_EQ(std::string(rec.headers[h].key.begin(), rec.headers[h].key.end()), headers[h]["key"].string);
          EXPECT_EQ(as_string(rec.headers[h].value), json_string(headers[h]["value"]));
        }
        // Magic 0 carries no timestamp: the pipeline stamps it; every other
        // format carries the client's CreateTime.
        const bool magic0 = version < 2 && want["magic"].array.size() == 1 && want["magic"].array[0].number == 0;
        if (magic0) {
          EXPECT_EQ(rec.timestamp_ms, -1);
        } else {
          EXPECT_GT(rec.timestamp_ms, 1'500'000'000'000);
        }
        ++records_checked;
      }
      EXPECT_GT(got.run.size_bytes, 0u);
    }
  }
  EXPECT_GT(records_checked, 100u);
}

}  // namespace
}  // namespace pp
