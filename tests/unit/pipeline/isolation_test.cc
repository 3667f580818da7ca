// Isolation (docs/design/PIPELINE.md C.11): a batch the broker refuses for the
// records its record_errors list fails only the client runs holding them; the
// batch's other runs are resent and the partition renumbered. And C.7's
// renumbering of batches that may already be in the log is counted
// (ambiguous_renumbered_total).
#include <map>
#include <string>

#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"
#include "tests/unit/pipeline/simulated_broker.h"

namespace pp::testing {
namespace {

class IsolationTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    observer = &counts;
  }

  // As Kafka's LogValidator: a record whose value starts with "bad" is
  // refused (INVALID_RECORD, e.g. a null key on a compacted topic) and the
  // whole batch with it, before any sequence is checked; the others go to
  // the broker model.
  PartitionAnswer validate_then_append(std::int32_t node, const SentBatch& b) {
    auto view = decode_record_batch(b.bytes);
    EXPECT_TRUE(view.has_value());
    PartitionAnswer refused;
    for (std::size_t i = 0; view && i < view->records().size(); ++i) {
      const auto& value = *view->records()[i].value;
      if (std::string(value.begin(), value.end()).starts_with("bad")) {
        refused.record_errors.push_back({static_cast<std::int32_t>(i), "null key on a compacted topic", {}});
      }
    }
    if (refused.record_errors.empty()) return broker.append(node, b);
    refused.error = ErrorCode::kInvalidRecord;
    refused.error_message = "One or more records have been rejected";
    return refused;
  }

  void answer_oldest() {
    auto s = upstream.take();
    ScriptedUpstream::answer(s, [&](const SentBatch& b) { return validate_then_append(s.node, b); });
  }

  CountingObserver counts;
  SimulatedBroker broker;
};

TEST_F(IsolationTest, RecordErrorsFailOnlyTheRunHoldingTheListedRecord) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  const std::size_t a = submit("t", 0, 2, "a");
  const std::size_t b = submit("t", 0, 3, "b");
  const std::size_t c = submit("t", 0, 1, "c");
  poll();
  auto sent = upstream.take();
  ASSERT_EQ(sent.batches.size(), 1u);
  ASSERT_EQ(sent.batches[0].record_count, 6) << "the three runs share one batch";
  ScriptedUpstream::answer(sent, [](const SentBatch&) {
    PartitionAnswer r = error(ErrorCode::kInvalidRecord);
    r.record_errors.push_back({3, "null key", {}});  // b's second record
    return r;
  });
  ASSERT_TRUE(results[b].has_value());
  EXPECT_EQ(results[b]->error, ErrorCode::kInvalidRecord);
  EXPECT_EQ(results[b]->error_message, "null key");
  EXPECT_FALSE(results[a].has_value()) << "a's records were not the broker's complaint";
  EXPECT_FALSE(results[c].has_value());

  poll();
  auto retry = upstream.take();
  ASSERT_EQ(retry.batches.size(), 1u);
  EXPECT_EQ(retry.batches[0].record_count, 3) << "a and c resent, b dropped";
  EXPECT_EQ(retry.batches[0].producer_epoch, 1) << "the refused batch's sequences were not used: renumbered";
  EXPECT_EQ(retry.batches[0].base_sequence, 0);
  EXPECT_EQ(counts.bumps["record_errors"], 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(100); });
  ASSERT_TRUE(results[a] && results[c]);
  EXPECT_EQ(results[a]->error, ErrorCode::kNone);
  EXPECT_EQ(results[a]->base_offset, 100);
  EXPECT_EQ(results[c]->error, ErrorCode::kNone);
  EXPECT_EQ(results[c]->base_offset, 102);
}

TEST_F(IsolationTest, WithoutRecordErrorsASingleRunFails) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  const std::size_t a = submit("t", 0, 2, "a");
  poll();
  auto sent = upstream.take();
  // One run: nothing to single out (several runs are bisected,
  // bisection_test.cc); an index outside the batch says nothing about it.
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kPolicyViolation); });
  ASSERT_TRUE(results[a]);
  EXPECT_EQ(results[a]->error, ErrorCode::kPolicyViolation);

  const std::size_t c = submit("t", 0, 2, "c");
  poll();
  auto second = upstream.take();
  ScriptedUpstream::answer(second, [](const SentBatch&) {
    PartitionAnswer r = error(ErrorCode::kInvalidRecord);
    r.record_errors.push_back({7, "beyond this batch", {}});
    return r;
  });
  ASSERT_TRUE(results[c].has_value());
  EXPECT_EQ(results[c]->error, ErrorCode::kInvalidRecord);
  EXPECT_TRUE(upstream.outstanding.empty());
}

TEST_F(IsolationTest, GoodRunsLandExactlyOnceAndInOrderAroundRefusedOnes) {
  start();
  broker.partitions[TopicPartition{"t", 0}];
  producer->on_metadata(broker.metadata("t"));
  std::vector<std::size_t> good;
  std::vector<std::size_t> bad;
  for (int i = 0; i < 40; ++i) {
    good.push_back(submit("t", 0, 3, "good" + std::to_string(i)));
    if (i % 3 == 1) bad.push_back(submit("t", 0, 2, "bad" + std::to_string(i)));
    if (i % 5 == 4) good.push_back(submit("t", 0, 1, "good" + std::to_string(i) + "x"));
    poll();
    // Two requests in flight at times, so later batches come back
    // OUT_OF_ORDER_SEQUENCE_NUMBER behind a refused one.
    if (upstream.outstanding.size() >= 2) answer_oldest();
  }
  for (int round = 0; round < 1000 && !upstream.outstanding.empty(); ++round) {
    answer_oldest();
    clock.advance(config.retry_backoff_ms);
    poll();
  }
  ASSERT_TRUE(upstream.outstanding.empty());
  for (std::size_t slot : bad) {
    ASSERT_TRUE(results[slot].has_value());
    EXPECT_EQ(results[slot]->error, ErrorCode::kInvalidRecord);
  }
  std::vector<std::string> expected;
  std::int64_t last_offset = -1;
  for (std::size_t slot : good) {
    ASSERT_TRUE(results[slot].has_value()) << "good run " << slot << " never ended";
    ASSERT_EQ(results[slot]->error, ErrorCode::kNone) << slot << ": " << results[slot]->error_message;
    EXPECT_GT(results[slot]->base_offset, last_offset) << "in order";
    last_offset = results[slot]->base_offset;
  }
  std::vector<std::string> logged;
  for (const auto& r : broker.partitions[TopicPartition{"t", 0}].log) {
    EXPECT_FALSE(r.value.starts_with("bad"));
    logged.push_back(r.value);
  }
  std::set<std::string> unique(logged.begin(), logged.end());
  EXPECT_EQ(unique.size(), logged.size()) << "no record twice";
  EXPECT_EQ(logged.size(), 40u * 3 + 8) << "every good record once";
  EXPECT_TRUE(std::is_sorted(logged.begin(), logged.end(), [](const std::string& x, const std::string& y) {
    auto run_of = [](const std::string& v) { return std::stoi(v.substr(4)); };
    return run_of(x) < run_of(y);
  })) << "in submission order";
  EXPECT_GT(counts.bumps["record_errors"], 0);
  EXPECT_EQ(counts.ambiguous["epoch_bump"], 0) << "nothing was ambiguous";
}

TEST_F(IsolationTest, RenumberingABatchThatMayBeInTheLogIsCounted) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 1, "first");
  poll();
  auto first = upstream.take();
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0); });
  const std::size_t x = submit("t", 0, 1, "x");
  poll();
  const std::size_t y = submit("t", 0, 1, "y");
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 2u);
  auto second = upstream.take();
  auto third = upstream.take();
  // y's attempt timed out: it may be in the log. x is refused as a whole,
  // so y must be renumbered under a new epoch.
  ScriptedUpstream::answer(third, [](const SentBatch&) { return error(ErrorCode::kRequestTimedOut); });
  ScriptedUpstream::answer(second, [](const SentBatch&) { return error(ErrorCode::kPolicyViolation); });
  ASSERT_TRUE(results[x].has_value());
  EXPECT_EQ(counts.ambiguous["epoch_bump"], 0) << "not before the bump";
  poll();
  EXPECT_EQ(counts.ambiguous["epoch_bump"], 1);
  EXPECT_EQ(producer->identity().epoch.value, 1);
  auto retry = upstream.take();
  ASSERT_EQ(retry.batches.size(), 1u);
  EXPECT_EQ(retry.batches[0].base_sequence, 0);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(7); });
  ASSERT_TRUE(results[y].has_value());
  EXPECT_EQ(results[y]->error, ErrorCode::kNone);
}

TEST_F(IsolationTest, AnAmbiguousBatchRebuiltWithoutARefusedRunIsCounted) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  const std::size_t a = submit("t", 0, 1, "a");
  const std::size_t b = submit("t", 0, 1, "b");
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kNetworkException); });
  clock.advance(config.retry_backoff_ms);
  poll();
  auto again = upstream.take();
  ScriptedUpstream::answer(again, [](const SentBatch&) {
    PartitionAnswer r = error(ErrorCode::kInvalidTimestamp);
    r.record_errors.push_back({1, "timestamp too far ahead", {}});
    return r;
  });
  ASSERT_TRUE(results[b].has_value());
  EXPECT_EQ(results[b]->error, ErrorCode::kInvalidTimestamp);
  EXPECT_EQ(counts.ambiguous["record_errors"], 1);
  poll();
  EXPECT_EQ(counts.ambiguous["epoch_bump"], 1) << "the rebuilt batch is renumbered too";
  auto retry = upstream.take();
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(3); });
  ASSERT_TRUE(results[a].has_value());
  EXPECT_EQ(results[a]->base_offset, 3);
}

}  // namespace
}  // namespace pp::testing
