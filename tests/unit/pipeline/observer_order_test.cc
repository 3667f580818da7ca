// The pipeline reports a batch's fate to its observer (the metrics) before it
// tells the clients: a client answered "acknowledged" that then scrapes
// /metrics finds its records counted (a race seen against real Kafka, where
// the answer to the client is written synchronously).
#include "tests/support/record_runs.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

struct CountingObserver : PipelineObserver {
  std::int64_t delivered = 0;
  std::int64_t failed = 0;
  void on_records_delivered(std::int64_t records) override { delivered += records; }
  void on_records_failed(ErrorCode, std::int64_t records) override { failed += records; }
};

class ObserverOrderTest : public PipelineFixture {
 protected:
  void start_observed() {
    producer = std::make_unique<IdempotentProducer>(config, upstream, clock, &observer);
    producer->poll();
    upstream.grant_producer_id(1000, 0);
    producer->on_metadata(leaders("t", {{1, 0}}));
  }
  // Submits `count` records; the completion records what the observer had seen.
  void submit_watching(int count) {
    RecordRun run = run_of(std::make_shared<std::vector<std::string>>(static_cast<std::size_t>(count), "v"));
    producer->submit("t", 0, std::move(run), [this](const RunResult&) {
      seen_at_completion = {observer.delivered, observer.failed};
    });
  }

  CountingObserver observer;
  std::optional<std::pair<std::int64_t, std::int64_t>> seen_at_completion;
};

TEST_F(ObserverOrderTest, DeliveredIsCountedBeforeTheClientHears) {
  start_observed();
  submit_watching(3);
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(10); });
  ASSERT_TRUE(seen_at_completion);
  EXPECT_EQ(seen_at_completion->first, 3);
}

TEST_F(ObserverOrderTest, FailedIsCountedBeforeTheClientHears) {
  start_observed();
  submit_watching(2);
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kInvalidRecord); });
  ASSERT_TRUE(seen_at_completion);
  EXPECT_EQ(seen_at_completion->second, 2);
}

}  // namespace
}  // namespace pp::testing
