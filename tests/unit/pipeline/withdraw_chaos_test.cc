// Randomized runs of the deadline path against the broker model: clients
// (origins) share partitions, their oldest queued runs are withdrawn at
// random moments (a deadline reached: oldest first, as deadlines of equal
// timeouts are), and each client resends what comes back withdrawn, in the
// order it hears it. Meanwhile the brokers go unreachable for a while now
// and then (runs queue up, as in an outage), responses are dropped after
// the append, errors answered before it and leaders moved. Whatever happens, every
// attempt ends once, a withdrawn attempt never reaches the log, and each
// client's records are in the log exactly once, in the order it sent them.
// Seeds are fixed, so a failure replays.
#include <deque>
#include <random>

#include "tests/unit/pipeline/pipeline_fixture.h"
#include "tests/unit/pipeline/simulated_broker.h"

namespace pp::testing {
namespace {

struct WithdrawChaosParams {
  std::uint32_t seed;
  double withdraw;  // chance per step that one client's deadline passes
  double drop_after_append;
  double error_before_append;
  double leader_move;
};

class WithdrawChaos : public PipelineFixture, public ::testing::WithParamInterface<WithdrawChaosParams> {
 public:
  // One client: the runs it has sent and not heard back about, oldest first.
  struct Client {
    std::int32_t partition = 0;
    std::deque<std::pair<RunTicket, std::size_t>> outstanding;  // ticket, attempt
    std::vector<std::vector<std::string>> runs;                 // logical runs, in send order
    std::vector<std::size_t> to_resend;                         // in the order their failures came
  };

  void send(std::uint64_t origin, Client& c, std::size_t logical) {
    auto storage = std::make_shared<std::vector<std::string>>(c.runs[logical]);
    RecordRun run = run_of(std::move(storage));
    run.origin = origin;
    const std::size_t attempt = attempts++;
    logical_of[attempt] = logical;
    c.outstanding.emplace_back(producer->submit("t", c.partition, std::move(run),
                                                [this, origin, attempt](const RunResult& r) {
                                                  ended.push_back({origin, attempt, r});
                                                }),
                               attempt);
  }

  struct Ended {
    std::uint64_t origin;
    std::size_t attempt;
    RunResult result;
  };
  std::map<std::size_t, std::size_t> logical_of;  // attempt -> logical run
  std::vector<Ended> ended;
  std::size_t attempts = 0;
};

TEST_P(WithdrawChaos, EveryRecordOnceAndEachClientsInOrder) {
  const WithdrawChaosParams params = GetParam();
  config.delivery_timeout_ms = 24L * 3600 * 1000;  // only withdrawals end runs early here
  config.max_partition_window = 20;
  upstream.max_in_flight_per_connection = 6;
  upstream.node_ready[3] = true;
  start();
  SimulatedBroker broker;
  constexpr int kPartitions = 3;
  constexpr int kClients = 6;
  for (int i = 0; i < kPartitions; ++i) {
    auto& p = broker.partitions[TopicPartition{"t", i}];
    p.retain = 20;
    p.leader = 1 + i % 3;
  }
  producer->on_metadata(broker.metadata("t"));
  std::mt19937 rng(params.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::map<std::uint64_t, Client> clients;
  for (int c = 1; c <= kClients; ++c) clients[static_cast<std::uint64_t>(c)].partition = c % kPartitions;
  std::size_t withdrawn_seen = 0;

  auto settle_results = [&] {
    for (const Ended& e : ended) {
      Client& c = clients.at(e.origin);
      // The attempt leaves the client's outstanding list wherever it is.
      auto it = std::find_if(c.outstanding.begin(), c.outstanding.end(),
                             [&](const auto& o) { return o.second == e.attempt; });
      ASSERT_NE(it, c.outstanding.end()) << "an attempt ended twice";
      c.outstanding.erase(it);
      if (e.result.withdrawn) {
        ++withdrawn_seen;
        ASSERT_EQ(e.result.error, ErrorCode::kNotEnoughReplicas);
        c.to_resend.push_back(logical_of.at(e.attempt));
      } else {
        ASSERT_EQ(e.result.error, ErrorCode::kNone) << error_name(e.result.error) << " " << e.result.error_message;
      }
    }
    ended.clear();
  };

  int steps = 0;
  auto step = [&](bool faults) {
    // An outage of 120 steps in every 400: nothing can be sent, runs queue.
    const bool dark = faults && (steps++ % 400) >= 280;
    for (int node = 1; node <= 3; ++node) upstream.node_ready[node] = !dark;
    if (!upstream.outstanding.empty() && (!faults || coin(rng) < 0.3 || upstream.outstanding.size() > 12)) {
      const std::size_t pick = rng() % upstream.outstanding.size();
      auto s = upstream.take(upstream.outstanding[pick].node);
      const double roll = coin(rng);
      if (faults && roll < params.error_before_append) {
        ScriptedUpstream::answer(s, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });
      } else {
        std::vector<PartitionAnswer> answers;
        for (const auto& b : s.batches) answers.push_back(broker.append(s.node, b));
        if (faults && roll < params.error_before_append + params.drop_after_append) {
          ScriptedUpstream::fail(s, ErrorCode::kNetworkException);
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
    if (faults && coin(rng) < params.withdraw) {
      // A deadline: the client's oldest attempt still outstanding.
      Client& c = clients.at(1 + rng() % kClients);
      if (!c.outstanding.empty()) producer->withdraw(c.outstanding.front().first);
      // The client hears at once what was withdrawn, and resends it.
      settle_results();
      for (auto& [origin, other] : clients) {
        for (std::size_t logical : other.to_resend) send(origin, other, logical);
        other.to_resend.clear();
      }
    }
    clock.advance(static_cast<std::int64_t>(rng() % 15));
    producer->poll();
    settle_results();
    // Each client resends what came back withdrawn, in the order it heard it.
    for (auto& [origin, c] : clients) {
      for (std::size_t logical : c.to_resend) send(origin, c, logical);
      c.to_resend.clear();
    }
  };

  for (int i = 0; i < 3000; ++i) {
    if (coin(rng) < 0.5) {
      const std::uint64_t origin = 1 + rng() % kClients;
      Client& c = clients.at(origin);
      const int count = 1 + static_cast<int>(rng() % 3);
      std::vector<std::string> run;
      for (int r = 0; r < count; ++r) {
        run.push_back("c" + std::to_string(origin) + "-" + std::to_string(c.runs.size()) + "-" + std::to_string(r));
      }
      c.runs.push_back(std::move(run));
      send(origin, c, c.runs.size() - 1);
    }
    step(true);
    if (HasFatalFailure()) return;
  }
  for (int i = 0; i < 20000 && !producer->idle(); ++i) {
    step(false);
    if (HasFatalFailure()) return;
  }
  ASSERT_TRUE(producer->idle()) << "runs still pending after the calm phase";
  EXPECT_GT(withdrawn_seen, 20u) << "the run never exercised withdrawal";

  // Each client's records, in the order the log holds them, are exactly
  // what it sent, in order: nothing withdrawn landed, nothing twice.
  std::map<std::uint64_t, std::vector<std::string>> logged;
  for (int i = 0; i < kPartitions; ++i) {
    for (const auto& rec : broker.partitions[TopicPartition{"t", i}].log) {
      const std::uint64_t origin = std::stoull(rec.value.substr(1, rec.value.find('-') - 1));
      logged[origin].push_back(rec.value);
    }
  }
  for (auto& [origin, c] : clients) {
    std::vector<std::string> sent;
    for (const auto& run : c.runs) sent.insert(sent.end(), run.begin(), run.end());
    EXPECT_EQ(logged[origin], sent) << "client " << origin;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, WithdrawChaos,
                         ::testing::Values(WithdrawChaosParams{11, 0.3, 0.0, 0.0, 0.0},
                                           WithdrawChaosParams{12, 0.2, 0.05, 0.05, 0.01},
                                           WithdrawChaosParams{13, 0.5, 0.1, 0.0, 0.02},
                                           WithdrawChaosParams{14, 0.1, 0.0, 0.15, 0.05}));

}  // namespace
}  // namespace pp::testing
