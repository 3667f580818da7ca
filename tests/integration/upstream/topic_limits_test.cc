// Upstream learning a topic's max.message.bytes (issue 14) from a scripted
// broker: DescribeConfigs follows the Metadata answer that names the topic,
// and a request that failed is asked again on a timer of its own, not only
// at the next metadata refresh (up to metadata_max_age_ms away).
#include <gtest/gtest.h>

#include <map>

#include "proxy/protocol/messages/describe_configs.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/upstream/upstream.h"
#include "tests/integration/upstream/loop_fixture.h"
#include "tests/integration/upstream/scripted_broker.h"

namespace pp::upstream::test {
namespace {

constexpr std::int16_t kDescribeConfigsKey = 32;

class TopicLimits : public LoopTest {
 protected:
  // Answers ApiVersions (DescribeConfigs v1-v4 listed), Metadata (itself as
  // node 1, leading t-0) and the DescribeConfigs requests after the first
  // `unanswered` with max.message.bytes = 4096.
  void start(int unanswered) {
    broker_ = std::make_unique<ScriptedBroker>(
        &loop_,
        [this, unanswered](ScriptedBroker& b, const ScriptedBroker::Request& req) {
          if (req.header.api_key == ApiKey::kApiVersions) {
            ApiVersionsResponse versions = ScriptedBroker::default_api_versions();
            versions.api_keys.push_back({kDescribeConfigsKey, 1, 4, {}});
            b.respond(req, versions);
          } else if (req.header.api_key == ApiKey::kMetadata) {
            b.respond(req, metadata(b.port()));
          } else if (req.header.api_key == ApiKey::kDescribeConfigs && ++describes_ > unanswered) {
            b.respond(req, limit_answer());
          }
        },
        false);
    UpstreamConfig config;
    config.bootstrap_servers = {"127.0.0.1:" + std::to_string(broker_->port())};
    config.request_timeout_ms = 400;
    config.metadata_max_age_ms = 600000;  // no refresh during the test
    // As the pipeline does once a partition led by node 1 has work: only
    // then is node 1 connected (the bootstrap connection retires).
    upstream_ = std::make_unique<Upstream>(&loop_, config,
                                           [this](const MetadataUpdate&) { upstream_->set_leaders_in_use({1}); });
    upstream_->set_topic_limit_listener(
        [this](const std::string& topic, std::int32_t bytes) { learned_[topic] = bytes; });
    ASSERT_TRUE(upstream_->start());
    upstream_->request_metadata({"t"});
  }
  void TearDown() override {
    if (upstream_) upstream_->close();
    run_for(50);
    upstream_.reset();
    if (broker_) broker_->stop();
    run_for(50);
    broker_.reset();
  }

  static MetadataResponse metadata(std::uint16_t port) {
    MetadataResponse m;
    m.brokers.push_back({1, "127.0.0.1", static_cast<std::int32_t>(port), std::nullopt, {}});
    MetadataResponseTopic t;
    t.name = "t";
    MetadataResponsePartition p;
    p.leader_id = 1;
    p.leader_epoch = 0;
    p.replica_nodes = {1};
    p.isr_nodes = {1};
    t.partitions.push_back(p);
    m.topics.push_back(t);
    return m;
  }
  static DescribeConfigsResponse limit_answer() {
    DescribeConfigsResult result;
    result.resource_type = kConfigResourceTopic;
    result.resource_name = "t";
    DescribeConfigsEntry entry;
    entry.name = "max.message.bytes";
    entry.value = "4096";
    result.configs.push_back(entry);
    DescribeConfigsResponse r;
    r.results.push_back(result);
    return r;
  }

  std::unique_ptr<ScriptedBroker> broker_;
  std::unique_ptr<Upstream> upstream_;
  std::map<std::string, std::int32_t> learned_;
  int describes_ = 0;
};

TEST_F(TopicLimits, LearnedAfterTheMetadataAnswerNamingTheTopic) {
  start(0);
  ASSERT_TRUE(run_until([&] { return learned_.contains("t"); }, 5000));
  EXPECT_EQ(learned_["t"], 4096);
  EXPECT_EQ(upstream_->max_message_bytes("t"), 4096);
  EXPECT_EQ(broker_->count(ApiKey::kDescribeConfigs), 1u);
}

// The first request times out (the connection is dropped with it): the
// topic is asked about again about 5 s later, although no metadata refresh
// is due for ten minutes.
TEST_F(TopicLimits, AFailedRequestIsRetriedOnItsOwnTimer) {
  start(1);
  ASSERT_TRUE(run_until([&] { return describes_ >= 1; }, 5000));
  const std::uint64_t first = net::now_ms(&loop_);
  ASSERT_TRUE(run_until([&] { return learned_.contains("t"); }, 9000))
      << "DescribeConfigs sent " << broker_->count(ApiKey::kDescribeConfigs) << " times";
  EXPECT_EQ(learned_["t"], 4096);
  EXPECT_GE(net::now_ms(&loop_) - first, 4000u) << "asked again before the retry delay";
  EXPECT_EQ(broker_->count(ApiKey::kDescribeConfigs), 2u);
  EXPECT_TRUE(capture_->contains("DescribeConfigs failed"));
}

}  // namespace
}  // namespace pp::upstream::test
