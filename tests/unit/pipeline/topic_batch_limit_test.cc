// Issue 14: a topic's max.message.bytes, learned upstream, bounds the
// batches built for it (the smaller of it and producer.batch_bytes), so a
// topic with a small limit is not sent batches it can only refuse.
#include <map>

#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class TopicBatchLimitTest : public PipelineFixture {
 public:
  // Acknowledges every batch sent, round after round, until nothing is sent;
  // returns each topic's batch sizes in send order.
  std::map<std::string, std::vector<std::size_t>> send_all(std::int64_t& offset) {
    std::map<std::string, std::vector<std::size_t>> sizes;
    for (int round = 0; round < 100 && !upstream.outstanding.empty(); ++round) {
      auto sent = upstream.take();
      for (const SentBatch& b : sent.batches) sizes[b.tp.topic].push_back(b.bytes.size());
      ScriptedUpstream::answer(sent, [&](const SentBatch& b) {
        const std::int64_t at = offset;
        offset += b.record_count;
        return ok(at);
      });
      poll();
    }
    return sizes;
  }
};

TEST_F(TopicBatchLimitTest, BatchesOfATopicWithASmallLimitStayUnderIt) {
  config.linger_ms = 50;
  start();
  producer->on_metadata(leaders("small", {{1, 0}}));
  producer->on_metadata(leaders("large", {{1, 0}}));
  producer->set_topic_batch_limit("small", 300);
  std::int64_t offset = 0;
  const std::size_t small = submit("small", 0, 60, "a-record-value-of-twenty-odd-bytes");
  const std::size_t large = submit("large", 0, 60, "a-record-value-of-twenty-odd-bytes");
  clock.advance(config.linger_ms);
  poll();
  auto sizes = send_all(offset);
  const auto& small_sizes = sizes["small"];
  const auto& large_sizes = sizes["large"];
  ASSERT_TRUE(results[small] && results[large]);
  EXPECT_EQ(results[small]->error, ErrorCode::kNone);
  EXPECT_EQ(results[large]->error, ErrorCode::kNone);
  EXPECT_EQ(large_sizes.size(), 1u) << "60 records of about 40 bytes: one batch under batch_bytes";
  ASSERT_GT(small_sizes.size(), 5u) << "about 2,500 bytes in batches of at most 300";
  for (std::size_t s : small_sizes) EXPECT_LE(s, 300u);
}

TEST_F(TopicBatchLimitTest, ALimitLearnedLaterAppliesToPartitionsAlreadyInUse) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  std::int64_t offset = 0;
  submit("t", 0, 1, "first");
  poll();
  send_all(offset);
  producer->set_topic_batch_limit("t", 200);
  submit("t", 0, 30, "a-record-value-of-twenty-odd-bytes");
  poll();
  const auto sizes = send_all(offset)["t"];
  ASSERT_GT(sizes.size(), 3u);
  for (std::size_t s : sizes) EXPECT_LE(s, 200u);
  EXPECT_EQ(offset, 31);
}

}  // namespace
}  // namespace pp::testing
