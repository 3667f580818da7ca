// Bisection (docs/design/PIPELINE.md C.11): a batch of several client runs
// that the broker refuses for some record's content without record_errors
// is resent in halves of its runs until the refused runs stand alone. Only
// they fail; the others land once each, in order, at the offsets reported.
#include <map>
#include <string>
#include <vector>

#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"
#include "tests/unit/pipeline/simulated_broker.h"

namespace pp::testing {
namespace {

class BisectionTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    observer = &counts;
    start();
    broker.partitions[kTp];
    producer->on_metadata(broker.metadata("t"));
  }

  // As a broker before 2.4, or a policy plugin: any batch holding a record
  // whose value starts with "bad" is refused whole, and which record it was
  // is not said. Nothing of it is appended.
  PartitionAnswer refuse_poisoned(std::int32_t node, const SentBatch& b) {
    auto view = decode_record_batch(b.bytes);
    EXPECT_TRUE(view.has_value());
    for (std::size_t i = 0; view && i < view->records().size(); ++i) {
      const auto& value = *view->records()[i].value;
      if (std::string(value.begin(), value.end()).starts_with("bad")) {
        PartitionAnswer refused = error(refusal);
        refused.error_message = "rejected by the broker's record check";
        return refused;
      }
    }
    return broker.append(node, b);
  }

  void answer_oldest() {
    auto s = upstream.take();
    ScriptedUpstream::answer(s, [&](const SentBatch& b) { return refuse_poisoned(s.node, b); });
  }

  // Answers until nothing is outstanding; bounded in rounds and clock time.
  void drive() {
    for (int round = 0; round < 200 && !upstream.outstanding.empty(); ++round) {
      answer_oldest();
      clock.advance(config.retry_backoff_ms);
      poll();
    }
    ASSERT_TRUE(upstream.outstanding.empty()) << "the partition never settled";
  }

  std::vector<std::string> logged() {
    std::vector<std::string> values;
    for (const auto& r : broker.partitions[kTp].log) values.push_back(r.value);
    return values;
  }

  void expect_delivered(std::size_t slot, std::int64_t offset) {
    ASSERT_TRUE(results[slot].has_value()) << "run " << slot << " never ended";
    EXPECT_EQ(results[slot]->error, ErrorCode::kNone) << slot << ": " << results[slot]->error_message;
    EXPECT_EQ(results[slot]->base_offset, offset) << "run " << slot;
  }

  void expect_refused(std::size_t slot) {
    ASSERT_TRUE(results[slot].has_value()) << "run " << slot << " never ended";
    EXPECT_EQ(results[slot]->error, refusal);
    EXPECT_EQ(results[slot]->error_message, "rejected by the broker's record check");
  }

  const TopicPartition kTp{"t", 0};
  ErrorCode refusal = ErrorCode::kInvalidRecord;
  CountingObserver counts;
  SimulatedBroker broker;
};

TEST_F(BisectionTest, OnlyThePoisonedClientsRunFails) {
  const std::size_t a = submit("t", 0, 2, "a");
  const std::size_t b = submit("t", 0, 1, "bad");
  const std::size_t c = submit("t", 0, 3, "c");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  ASSERT_EQ(upstream.outstanding.front().batches.at(0).record_count, 6) << "the three runs share one batch";
  answer_oldest();
  EXPECT_FALSE(results[a] || results[b] || results[c]) << "nobody is answered before the refused run is found";
  poll();
  drive();
  expect_refused(b);
  expect_delivered(a, 0);
  expect_delivered(c, 2);
  EXPECT_EQ(logged(), (std::vector<std::string>{"a-0", "a-1", "c-0", "c-1", "c-2"})) << "once each, in order";
  // 3 runs: the refusal, then at most 2 * ceil(log2 3) resends.
  EXPECT_LE(upstream.produce_requests_sent, 5);
  EXPECT_EQ(counts.bumps["INVALID_RECORD"], 1) << "only the lone refused run leaves a sequence gap";
  EXPECT_TRUE(counts.ambiguous.empty());
}

TEST_F(BisectionTest, BatchesInFlightBehindTheRefusedOneLandInOrder) {
  const std::size_t first = submit("t", 0, 1, "first");
  poll();
  answer_oldest();
  expect_delivered(first, 0);
  const std::size_t a = submit("t", 0, 2, "a");
  const std::size_t b = submit("t", 0, 2, "bad");
  const std::size_t c = submit("t", 0, 1, "c");
  poll();
  const std::size_t d = submit("t", 0, 2, "d");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 2u) << "d's batch is in flight behind the refused one";
  drive();
  expect_refused(b);
  expect_delivered(a, 1);
  expect_delivered(c, 3);
  expect_delivered(d, 4);
  EXPECT_EQ(logged(), (std::vector<std::string>{"first-0", "a-0", "a-1", "c-0", "d-0", "d-1"}));
}

TEST_F(BisectionTest, ASingleRunFailsAtOnce) {
  const std::size_t bad = submit("t", 0, 3, "bad");
  poll();
  answer_oldest();
  expect_refused(bad);
  poll();
  EXPECT_TRUE(upstream.outstanding.empty()) << "nothing to resend";
  EXPECT_EQ(upstream.produce_requests_sent, 1);
  const std::size_t after = submit("t", 0, 1, "after");
  poll();
  drive();
  expect_delivered(after, 0);
}

TEST_F(BisectionTest, EveryRunBadFailsEachWithTheBrokersCode) {
  refusal = ErrorCode::kPolicyViolation;
  std::vector<std::size_t> runs;
  runs.reserve(4);
  for (int i = 0; i < 4; ++i) runs.push_back(submit("t", 0, 2, "bad" + std::to_string(i)));
  poll();
  drive();
  for (std::size_t slot : runs) expect_refused(slot);
  EXPECT_TRUE(logged().empty());
  EXPECT_EQ(upstream.produce_requests_sent, 7) << "the whole tree of 4 runs: 1 + 2 + 4";
  const std::size_t after = submit("t", 0, 1, "after");
  poll();
  drive();
  expect_delivered(after, 0);
}

TEST_F(BisectionTest, ResendsAreCappedWhenEveryRunIsBad) {
  std::vector<std::size_t> runs;
  runs.reserve(16);
  for (int i = 0; i < 16; ++i) runs.push_back(submit("t", 0, 1, "bad" + std::to_string(i)));
  poll();
  ASSERT_EQ(upstream.outstanding.front().batches.at(0).record_count, 16);
  drive();
  for (std::size_t slot : runs) expect_refused(slot);
  // 2 * log2(16) + 1 = 9 bisections, 2 sends each, beside the first send;
  // the whole tree would take 31.
  EXPECT_LE(upstream.produce_requests_sent, 19);
  EXPECT_TRUE(logged().empty());
}

TEST_F(BisectionTest, ABatchThatMayBeInTheLogIsCountedWhenBisected) {
  const std::size_t a = submit("t", 0, 1, "a");
  const std::size_t b = submit("t", 0, 1, "bad");
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kNetworkException); });
  clock.advance(config.retry_backoff_ms);
  poll();
  drive();
  expect_refused(b);
  expect_delivered(a, 0);
  EXPECT_EQ(counts.ambiguous["bisection"], 1) << "new boundaries for a batch that may have been appended";
}

}  // namespace
}  // namespace pp::testing
