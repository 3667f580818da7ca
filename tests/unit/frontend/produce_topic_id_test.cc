// Produce v13 (KIP-516) from clients: topics named by id, mapped to the
// upstream's names through the TopicDirectory, over real sockets. An id the
// directory does not know is answered UNKNOWN_TOPIC_ID for that topic's
// partitions and the rest of the request is served; the answer names every
// topic by the id the client sent.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

Uuid uuid_of(std::uint8_t seed) {
  Uuid id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(seed + i);
  return id;
}

struct ById {
  Uuid id;
  std::int32_t partition = 0;
  Bytes records;
};

// A v13 request frame (with its size prefix) naming topics by id only, one
// topic entry per run of equal ids.
Bytes produce_by_id_frame(std::int32_t correlation_id, std::int16_t acks, const std::vector<ById>& entries) {
  ProduceRequest r;
  r.acks = acks;
  r.timeout_ms = 30000;
  for (const ById& e : entries) {
    if (r.topic_data.empty() || r.topic_data.back().topic_id != e.id) r.topic_data.emplace_back().topic_id = e.id;
    ProducePartitionData& p = r.topic_data.back().partition_data.emplace_back();
    p.index = e.partition;
    p.records.data = ByteView(e.records);
  }
  RequestHeader h;
  h.api_key = ApiKey::kProduce;
  h.api_version = kProduceTopicIdVersion;
  h.correlation_id = correlation_id;
  h.client_id = "java-like";
  return encode_request_frame(h, r);
}

class ProduceTopicIdTest : public test::FrontendFixture {
 protected:
  void SetUp() override {
    test::FrontendFixture::SetUp();
    directory_->add("orders", 3, orders_id_);
    directory_->add("events", 1, events_id_);
  }

  const Uuid orders_id_ = uuid_of(0x10);
  const Uuid events_id_ = uuid_of(0x40);
  const Uuid unknown_id_ = uuid_of(0x70);
};

TEST_F(ProduceTopicIdTest, KnownIdsAreServedByNameAndAnUnknownIdIsAnsweredUnknownTopicId) {
  start();
  auto client = connect();
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(3));
  ASSERT_TRUE(client->write_raw(produce_by_id_frame(
      9, -1, {{orders_id_, 0, batch}, {orders_id_, 2, batch}, {unknown_id_, 0, batch}, {events_id_, 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(3));
  test::run_for(&loop_, 20);
  ASSERT_EQ(sink_.submissions.size(), 3u) << "nothing is submitted for the unknown id";
  EXPECT_EQ(sink_.submissions[0].topic, "orders");
  EXPECT_EQ(sink_.submissions[0].partition, 0);
  EXPECT_EQ(sink_.submissions[1].topic, "orders");
  EXPECT_EQ(sink_.submissions[1].partition, 2);
  EXPECT_EQ(sink_.submissions[2].topic, "events");
  EXPECT_EQ(sink_.submissions[0].run.records.size(), 3u);
  sink_.complete(0, 100);
  sink_.complete(1, 200);
  sink_.complete(2, 300);

  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  std::int32_t correlation = -1;
  auto response = test::decode_response<ProduceResponse>(*frame, kProduceTopicIdVersion, &correlation);
  ASSERT_TRUE(response);
  EXPECT_EQ(correlation, 9);
  ASSERT_EQ(response->responses.size(), 3u);
  // v13 answers name topics by id, the client's own, in request order.
  EXPECT_EQ(response->responses[0].topic_id, orders_id_);
  EXPECT_EQ(response->responses[1].topic_id, unknown_id_);
  EXPECT_EQ(response->responses[2].topic_id, events_id_);
  for (const ProduceTopicResponse& t : response->responses) EXPECT_EQ(t.name, "") << "v13 carries no names";
  ASSERT_EQ(response->responses[0].partition_responses.size(), 2u);
  EXPECT_EQ(response->responses[0].partition_responses[0].error_code, ErrorCode::kNone);
  EXPECT_EQ(response->responses[0].partition_responses[0].base_offset, 100);
  EXPECT_EQ(response->responses[0].partition_responses[1].index, 2);
  EXPECT_EQ(response->responses[0].partition_responses[1].base_offset, 200);
  ASSERT_EQ(response->responses[1].partition_responses.size(), 1u);
  const ProducePartitionResponse& unknown = response->responses[1].partition_responses[0];
  EXPECT_EQ(unknown.error_code, ErrorCode::kUnknownTopicId);
  EXPECT_EQ(unknown.base_offset, -1);
  EXPECT_NE(unknown.error_message.value_or("").find(unknown_id_.to_string()), std::string::npos);
  EXPECT_EQ(response->responses[2].partition_responses[0].base_offset, 300);
}

TEST_F(ProduceTopicIdTest, TheZeroIdIsNoTopicsId) {
  directory_->add("nameless", 1);  // described without an id: zero
  start();
  auto client = connect();
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(1));
  ASSERT_TRUE(client->write_raw(produce_by_id_frame(1, 1, {{Uuid{}, 0, batch}})));
  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  auto response = test::decode_response<ProduceResponse>(*frame, kProduceTopicIdVersion);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kUnknownTopicId);
  EXPECT_TRUE(sink_.submissions.empty());
}

// Produce v13 is served even when ApiVersions did not list it (the upstream
// offers no ids): every id is then unknown, or known from an earlier answer.
TEST_F(ProduceTopicIdTest, AV13RequestIsServedWhateverApiVersionsListed) {
  directory_->topic_ids = false;
  start();
  auto client = connect();
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(1));
  ASSERT_TRUE(client->write_raw(produce_by_id_frame(1, 1, {{events_id_, 0, batch}})));
  ASSERT_TRUE(wait_for_submissions(1));
  EXPECT_EQ(sink_.submissions[0].topic, "events");
  sink_.complete(0, 7);
  auto frame = client->read_frame();
  ASSERT_TRUE(frame);
  auto response = test::decode_response<ProduceResponse>(*frame, kProduceTopicIdVersion);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->responses.at(0).topic_id, events_id_);
  EXPECT_EQ(response->responses.at(0).partition_responses.at(0).base_offset, 7);
}

// The conversion itself: names come only from name_topics_by_id, and only
// from v13 on.
TEST(ProduceTopicIdConversion, UnnamedV13TopicsAreUnknownIdsAndOlderVersionsKeepTheirNames) {
  const Bytes batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(2));
  auto decoded = test::decoded_produce(12, 1, {{"orders", 0, batch}});
  ASSERT_EQ(decoded.request.topic_data.size(), 1u);
  ProduceRequest v12 = decoded.request;
  name_topics_by_id(v12, 12, [](const Uuid&) { return std::optional<std::string>("other"); });
  EXPECT_EQ(v12.topic_data[0].name, "orders") << "below v13 the request is left as decoded";

  ProduceRequest v13 = decoded.request;
  v13.topic_data[0].name.clear();
  v13.topic_data[0].topic_id = uuid_of(1);
  auto unnamed = convert_produce_request(v13, kProduceTopicIdVersion, decoded.frame);
  ASSERT_EQ(unnamed.partitions.size(), 1u);
  EXPECT_EQ(unnamed.partitions[0].error, ErrorCode::kUnknownTopicId);
  EXPECT_EQ(unnamed.records, 0u);

  name_topics_by_id(v13, kProduceTopicIdVersion, [](const Uuid& id) {
    return id == uuid_of(1) ? std::optional<std::string>("orders") : std::nullopt;
  });
  auto named = convert_produce_request(v13, kProduceTopicIdVersion, decoded.frame);
  ASSERT_EQ(named.partitions.size(), 1u);
  EXPECT_EQ(named.partitions[0].error, ErrorCode::kNone) << named.partitions[0].error_message;
  EXPECT_EQ(named.partitions[0].topic, "orders");
  EXPECT_EQ(named.records, 2u);
}

}  // namespace
}  // namespace pp
