// Back-pressure (rule of the house 5): over the sink's memory budget every
// client's reads pause; the sink's memory-available signal resumes them;
// nothing is dropped or refused, and throttle_time_ms says it happened.
// Rules of the house: docs/design/ARCHITECTURE.md.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using BackpressureTest = test::FrontendFixture;

TEST_F(BackpressureTest, OverBudgetPausesEveryClientAndTheSinkSignalResumes) {
  sink_.set_budget(1);  // the first run puts the sink over
  start();
  auto a = connect();
  auto b = connect();
  const Bytes set = test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(3));
  ASSERT_TRUE(a->write_raw(test::produce_frame(2, 1, 1, {{"orders", 0, set}})));
  ASSERT_TRUE(wait_for_submissions(1));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->backpressure_active(); }));
  EXPECT_TRUE(frontend_->counters().backpressure_active);

  // Both clients keep sending; nothing reaches the sink while paused.
  ASSERT_TRUE(a->write_raw(test::produce_frame(2, 2, 1, {{"orders", 1, set}})));
  ASSERT_TRUE(b->write_raw(test::produce_frame(2, 1, 1, {{"orders", 2, set}})));
  test::run_for(&loop_, 100);
  EXPECT_EQ(sink_.submissions.size(), 1u);

  sink_.complete(0, 0);  // under budget: the sink fires its listener
  auto first = a->read_frame();
  ASSERT_TRUE(first);
  auto response = test::decode_response<ProduceResponse>(*first, 2);
  ASSERT_TRUE(response);
  EXPECT_GT(response->throttle_time_ms, 0);  // held by back-pressure
  ASSERT_TRUE(wait_for_submissions(2));
  // The second run puts the sink over again; one at a time they all get in.
  for (std::size_t i = 1; i < 3; ++i) {
    ASSERT_TRUE(wait_for_submissions(i + 1)) << i;
    sink_.complete(i, static_cast<std::int64_t>(i) * 3);
  }
  EXPECT_TRUE(a->read_frame());
  EXPECT_TRUE(b->read_frame());
  EXPECT_EQ(sink_.submissions.size(), 3u);
  EXPECT_GE(frontend_->counters().backpressure_pauses_total, 2u);
  EXPECT_TRUE(sink_.has_listener());
}

TEST_F(BackpressureTest, OverBudgetNewConnectionsWaitInTheBacklogUntilTheBudgetFrees) {
  sink_.set_budget(1);
  start();
  auto a = connect();
  const Bytes set = test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(3));
  ASSERT_TRUE(a->write_raw(test::produce_frame(2, 1, 1, {{"orders", 0, set}})));
  ASSERT_TRUE(wait_for_submissions(1));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->backpressure_active(); }));
  ASSERT_EQ(frontend_->counters().connections_accepted_total, 1u);

  // The kernel completes the handshakes; the proxy takes none of them yet.
  auto b = connect();
  auto c = connect();
  ASSERT_TRUE(b->write_raw(test::produce_frame(2, 1, 1, {{"orders", 1, set}})));
  test::run_for(&loop_, 100);
  EXPECT_EQ(frontend_->counters().connections_accepted_total, 1u);
  EXPECT_EQ(frontend_->counters().client_connections, 1);
  EXPECT_EQ(frontend_->counters().connections_refused_total, 0u);

  sink_.complete(0, 0);  // under budget: accepts resume, then b's request is read
  ASSERT_TRUE(a->read_frame());
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->counters().connections_accepted_total == 3; }));
  ASSERT_TRUE(wait_for_submissions(2));
  sink_.complete(1, 3);
  EXPECT_TRUE(b->read_frame());
  EXPECT_FALSE(c->eof());
}

TEST_F(BackpressureTest, ABurstIsDeliveredCompletelyUnderASmallBudget) {
  const auto records = test::numbered_records(50);
  const Bytes set = test::legacy_set(1, CompressionCodec::kGzip, records);
  sink_.set_budget(8 * 1024);
  start();
  auto client = connect();
  constexpr int kRequests = 200;
  Bytes burst;
  for (int i = 0; i < kRequests; ++i) {
    Bytes f = test::produce_frame(2, i, 0, {{"orders", i % 3, set}});
    burst.insert(burst.end(), f.begin(), f.end());
  }
  ASSERT_TRUE(client->write_raw(burst));
  // Play the pipeline: complete what arrives, in order, a few at a time.
  std::size_t completed = 0;
  ASSERT_TRUE(test::run_until(
      &loop_,
      [&] {
        while (completed < sink_.submissions.size()) sink_.complete(completed++, 0);
        return completed == kRequests;
      },
      10000));
  EXPECT_EQ(frontend_->counters().records_received_total, kRequests * records.size());
  EXPECT_GT(frontend_->counters().backpressure_pauses_total, 0u);
  EXPECT_FALSE(client->eof());
}

}  // namespace
}  // namespace pp
