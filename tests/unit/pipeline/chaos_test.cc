// Randomized fault runs against the broker model: dropped responses after
// append, retriable errors before append, timeouts, leader moves. Whatever
// happens, every run ends once, and each partition's log holds every record
// exactly once, in submission order. Seeds are fixed, so a failure replays.
#include "tests/unit/pipeline/pipeline_fixture.h"
#include "tests/unit/pipeline/simulated_broker.h"

namespace pp::testing {
namespace {

struct ChaosParams {
  std::uint32_t seed;
  std::int32_t retain;
  double drop_after_append;
  double error_before_append;
  double leader_move;
};

class ChaosTest : public PipelineFixture, public ::testing::WithParamInterface<ChaosParams> {};

TEST_P(ChaosTest, ExactlyOnceAndInOrderThroughFaults) {
  const ChaosParams params = GetParam();
  config.delivery_timeout_ms = 24L * 3600 * 1000;  // nothing may be given up here
  config.max_partition_window = 50;
  upstream.max_in_flight_per_connection = 8;
  upstream.node_ready[3] = true;
  start();
  SimulatedBroker broker;
  const int kPartitions = 4;
  for (int i = 0; i < kPartitions; ++i) {
    auto& p = broker.partitions[TopicPartition{"t", i}];
    p.retain = params.retain;
    p.leader = 1 + i % 3;
  }
  producer->on_metadata(broker.metadata("t"));
  std::mt19937 rng(params.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::map<std::int32_t, std::vector<std::string>> submitted;
  std::int32_t max_inflight_seen = 0;

  auto step = [&](bool faults) {
    // Answer slower than requests come, so in-flight counts build up to the windows.
    if (!upstream.outstanding.empty() && (!faults || coin(rng) < 0.3 || upstream.outstanding.size() > 20)) {
      // Answer a random outstanding request: per connection, in order.
      const std::size_t pick = rng() % upstream.outstanding.size();
      const std::int32_t node = upstream.outstanding[pick].node;
      auto s = upstream.take(node);
      const double roll = coin(rng);
      if (faults && roll < params.error_before_append) {
        ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });
      } else {
        std::vector<PartitionAnswer> answers;
        for (const auto& b : s.batches) answers.push_back(broker.append(s.node, b));
        if (faults && roll < params.error_before_append + params.drop_after_append) {
          ScriptedUpstream::fail(s, coin(rng) < 0.5 ? ErrorCode::kNetworkException : ErrorCode::kRequestTimedOut);
        } else {
          std::size_t i = 0;
          ScriptedUpstream::answer(s, [&](const SentBatch&) { return answers[i++]; });
        }
      }
    }
    if (faults && coin(rng) < params.leader_move) {
      auto& p = broker.partitions[TopicPartition{"t", static_cast<std::int32_t>(rng() % kPartitions)}];
      p.leader = 1 + (p.leader % 3);
      ++p.leader_epoch;
      producer->on_metadata(broker.metadata("t"));
    }
    clock.advance(static_cast<std::int64_t>(rng() % 15));
    std::map<int, std::pair<ProducerIdAndEpoch, std::uint64_t>> before;
    for (int i = 0; i < kPartitions; ++i) {
      if (const auto* st = producer->partition(TopicPartition{"t", i})) {
        before[i] = {st->sequence_owner(), st->next_ordinal()};
      }
    }
    producer->poll();
    for (int i = 0; i < kPartitions; ++i) {
      const auto* st = producer->partition(TopicPartition{"t", i});
      if (!st) continue;
      max_inflight_seen = std::max(max_inflight_seen, st->inflight_batches());
      // A lowered window does not recall what is in flight, but no new batch
      // may go out while the partition is at or above it.
      const auto it = before.find(i);
      const bool new_batch_sent =
          it == before.end() || it->second.first != st->sequence_owner() || st->next_ordinal() > it->second.second;
      if (new_batch_sent) {
        ASSERT_LE(st->inflight_batches(), st->window()) << "a new batch went out above the window";
        const auto& unacked = st->unacked();
        if (!unacked.empty()) {
          ASSERT_LE(st->next_ordinal() - unacked.front()->ordinal, static_cast<std::uint64_t>(st->window()))
              << "span from the oldest unacked batch above the window";
        }
      }
    }
  };

  for (int i = 0; i < 3000; ++i) {
    if (coin(rng) < 0.5) {
      const std::int32_t partition = static_cast<std::int32_t>(rng() % kPartitions);
      const std::string tag = "p" + std::to_string(partition) + "-run" + std::to_string(submitted[partition].size());
      const int count = 1 + static_cast<int>(rng() % 4);
      submit("t", partition, count, tag);
      for (int r = 0; r < count; ++r) submitted[partition].push_back(tag + "-" + std::to_string(r));
    }
    step(true);
    if (HasFatalFailure()) return;
  }
  // Calm down: no faults until everything is acknowledged.
  for (int i = 0; i < 20000 && !producer->idle(); ++i) {
    step(false);
    if (HasFatalFailure()) return;
  }
  ASSERT_TRUE(producer->idle()) << "runs still pending after the calm phase";
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, ErrorCode::kNone) << error_name(r->error) << " " << r->error_message;
  }
  std::int64_t duplicates_recognised = 0;
  for (int i = 0; i < kPartitions; ++i) {
    const auto& p = broker.partitions[TopicPartition{"t", i}];
    std::vector<std::string> logged;
    for (const auto& rec : p.log) logged.push_back(rec.value);
    EXPECT_EQ(logged, submitted[i]) << "partition " << i << ": log differs from what was submitted";
    duplicates_recognised += p.duplicates;
  }
  if (params.drop_after_append > 0) {
    EXPECT_GT(duplicates_recognised, 0) << "the faults never exercised dedup";
  }
  if (params.retain > 5) {
    EXPECT_GT(max_inflight_seen, 5) << "a learned window was never used";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ChaosTest,
                         ::testing::Values(ChaosParams{1, 5, 0.05, 0.05, 0.01}, ChaosParams{2, 20, 0.05, 0.05, 0.01},
                                           ChaosParams{3, 20, 0.15, 0.0, 0.0}, ChaosParams{4, 5, 0.0, 0.2, 0.05},
                                           ChaosParams{5, 20, 0.1, 0.1, 0.03}, ChaosParams{6, 50, 0.02, 0.02, 0.002}));

}  // namespace
}  // namespace pp::testing
