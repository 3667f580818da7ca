// Which client software sends which Produce version and message format
// (issue 16, for operators moving off old clients): the name and version from
// ApiVersions v3+ (KIP-511), else the client_id.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"
#include "proxy/frontend/frontend.h"

namespace pp {
namespace {

struct Seen {
  std::string software, software_version;
  std::int16_t version;
  std::int8_t magic;
};

class RecordingObserver : public FrontendObserver {
 public:
  void on_client_produce(std::string_view sw, std::string_view v, std::int16_t version, std::int8_t magic) override {
    seen.push_back({std::string(sw), std::string(v), version, magic});
  }
  std::vector<Seen> seen;
};

class ClientSoftwareTest : public test::FrontendFixture {
 protected:
  void start_observed() {
    FrontendConfig config;
    config.listen_address = {"127.0.0.1", 0};
    frontend_ = std::make_unique<Frontend>(&loop_, config, sink_, *directory_, &observer_);
    ASSERT_TRUE(frontend_->start());
  }
  RecordingObserver observer_;
};

TEST_F(ClientSoftwareTest, NamedByApiVersionsV3ElseByClientId) {
  start_observed();
  auto legacy = connect();
  ASSERT_TRUE(legacy->write_raw(test::produce_frame(
      1, 1, 1, {{"orders", 0, test::legacy_set(0, CompressionCodec::kNone, test::numbered_records(1))}})));
  auto modern = connect();
  ApiVersionsRequest hello;
  hello.client_software_name = "apache-kafka-java";
  hello.client_software_version = "4.4.0";
  ASSERT_TRUE(modern->send(ApiKey::kApiVersions, 3, 1, hello));
  ASSERT_TRUE(modern->read_frame());
  ASSERT_TRUE(modern->write_raw(test::produce_frame(
      9, 2, 1, {{"orders", 1, test::record_batch(CompressionCodec::kNone, test::numbered_records(1))}})));
  ASSERT_TRUE(wait_for_submissions(2));
  ASSERT_EQ(observer_.seen.size(), 2u);
  EXPECT_EQ(observer_.seen[0].software, "test-producer");  // the client_id
  EXPECT_EQ(observer_.seen[0].software_version, "");
  EXPECT_EQ(observer_.seen[0].version, 1);
  EXPECT_EQ(observer_.seen[0].magic, 0);
  EXPECT_EQ(observer_.seen[1].software, "apache-kafka-java");
  EXPECT_EQ(observer_.seen[1].software_version, "4.4.0");
  EXPECT_EQ(observer_.seen[1].version, 9);
  EXPECT_EQ(observer_.seen[1].magic, 2);
}

}  // namespace
}  // namespace pp
