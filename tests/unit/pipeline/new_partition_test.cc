// A partition just added upstream (CreatePartitions) reaches the brokers'
// metadata at different times: records for it wait for a later Metadata
// answer before they fail UNKNOWN_TOPIC_OR_PARTITION.
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class NewPartitionTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    start();
    producer->on_metadata(leaders("t", {{1, 0}}));
  }
};

TEST_F(NewPartitionTest, RecordsForAPartitionTheMetadataDoesNotNameYetWaitForTheNextAnswer) {
  const std::size_t slot = submit("t", 1, 2);
  upstream.metadata_requested.clear();
  poll();
  EXPECT_FALSE(results[slot].has_value()) << "not failed on the answer that was current when they came";
  EXPECT_FALSE(upstream.metadata_requested.empty()) << "the partition is asked about";
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto sent = upstream.take_with("t", 1);
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(0); });
  poll();
  ASSERT_TRUE(results[slot].has_value());
  EXPECT_EQ(results[slot]->error, ErrorCode::kNone);
}

TEST_F(NewPartitionTest, RecordsForAPartitionLaterAnswersStillLeaveOutFail) {
  const std::size_t slot = submit("t", 3, 2);
  poll();
  producer->on_metadata(leaders("t", {{1, 0}}));
  poll();
  EXPECT_FALSE(results[slot].has_value()) << "one later answer may come from a broker that has not learned it";
  producer->on_metadata(leaders("t", {{1, 0}}));
  poll();
  ASSERT_TRUE(results[slot].has_value());
  EXPECT_EQ(results[slot]->error, ErrorCode::kUnknownTopicOrPartition);
  EXPECT_TRUE(upstream.outstanding.empty());
}

}  // namespace
}  // namespace pp::testing
