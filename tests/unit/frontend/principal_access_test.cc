// [[listener.principals]] on a real session: the loopback test client is
// ANONYMOUS, restricted here by a rule that names it. A Produce naming an
// allowed and a forbidden topic fails only the forbidden partitions and
// submits only the allowed records; Metadata refuses a named forbidden topic
// without asking the directory and leaves it out of a full listing;
// InitProducerId without IDEMPOTENT_WRITE is refused; with no rules at all
// everything is allowed as before.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"
#include "proxy/protocol/messages/init_producer_id.h"
#include "proxy/protocol/messages/metadata.h"

namespace pp {
namespace {

class PrincipalAccessTest : public test::FrontendFixture {
 protected:
  static FrontendConfig restricted(bool idempotent_write) {
    FrontendConfig config;
    config.principals.push_back(PrincipalGrant{"ANONYMOUS", {"ord*"}, idempotent_write, 0});
    return config;
  }

  template <class R>
  R read(test::TestClient& client, std::int16_t version) {
    auto frame = client.read_frame();
    EXPECT_TRUE(frame);
    if (!frame) return {};
    std::int32_t correlation = -1;
    auto response = test::decode_response<R>(*frame, version, &correlation);
    EXPECT_TRUE(response);
    return response.value_or(R{});
  }

  MetadataResponse metadata(test::TestClient& client, std::optional<std::vector<std::string>> names) {
    MetadataRequest request;
    if (names) {
      request.topics.emplace();
      for (auto& n : *names) request.topics->push_back(MetadataRequestTopic{{}, n, {}});
    } else {
      request.topics = std::nullopt;
    }
    EXPECT_TRUE(client.send(ApiKey::kMetadata, 9, 7, request));
    return read<MetadataResponse>(client, 9);
  }
};

TEST_F(PrincipalAccessTest, OnlyTheForbiddenTopicsPartitionsFail) {
  start(restricted(true));
  auto client = connect();
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(3));
  ASSERT_TRUE(client->write_raw(
      test::produce_frame(9, 4, -1, {{"orders", 0, batch}, {"events", 0, batch}, {"orders", 1, batch}})));
  ASSERT_TRUE(wait_for_submissions(2));
  test::run_for(&loop_, 20);
  ASSERT_EQ(sink_.submissions.size(), 2u) << "only the allowed topic goes upstream";
  for (const auto& s : sink_.submissions) EXPECT_EQ(s.topic, "orders");
  sink_.complete(0, 10);
  sink_.complete(1, 20);
  auto response = read<ProduceResponse>(*client, 9);
  // One entry per topic entry of the request, in its order.
  ASSERT_EQ(response.responses.size(), 3u);
  for (const auto& t : response.responses) {
    for (const auto& p : t.partition_responses) {
      EXPECT_EQ(p.error_code, t.name == "events" ? ErrorCode::kTopicAuthorizationFailed : ErrorCode::kNone)
          << t.name << "-" << p.index;
    }
  }
}

TEST_F(PrincipalAccessTest, MetadataRefusesANamedForbiddenTopicAndHidesItFromAListing) {
  start(restricted(true));
  auto client = connect();
  const auto named = metadata(*client, std::vector<std::string>{"events", "orders"});
  ASSERT_EQ(named.topics.size(), 2u);
  EXPECT_EQ(named.topics[0].name, "events");
  EXPECT_EQ(named.topics[0].error_code, ErrorCode::kTopicAuthorizationFailed);
  EXPECT_TRUE(named.topics[0].partitions.empty());
  EXPECT_EQ(named.topics[1].error_code, ErrorCode::kNone);
  ASSERT_TRUE(directory_->last_topics);
  EXPECT_EQ(*directory_->last_topics, std::vector<std::string>{"orders"}) << "a forbidden name is never asked";

  const auto listing = metadata(*client, std::nullopt);
  ASSERT_EQ(listing.topics.size(), 1u);
  EXPECT_EQ(listing.topics[0].name, "orders");
}

TEST_F(PrincipalAccessTest, InitProducerIdNeedsIdempotentWrite) {
  start(restricted(false));
  auto client = connect();
  InitProducerIdRequest request;
  request.transactional_id = std::nullopt;
  ASSERT_TRUE(client->send(ApiKey::kInitProducerId, 1, 3, request));
  EXPECT_EQ(read<InitProducerIdResponse>(*client, 1).error_code, ErrorCode::kClusterAuthorizationFailed);
}

TEST_F(PrincipalAccessTest, WithoutRulesEverythingIsAllowed) {
  start();
  auto client = connect();
  const auto listing = metadata(*client, std::nullopt);
  EXPECT_EQ(listing.topics.size(), 2u);
  InitProducerIdRequest request;
  request.transactional_id = std::nullopt;
  ASSERT_TRUE(client->send(ApiKey::kInitProducerId, 1, 3, request));
  EXPECT_EQ(read<InitProducerIdResponse>(*client, 1).error_code, ErrorCode::kNone);
}

}  // namespace
}  // namespace pp
