// The budget is not crossed by admissions (issue 14, docs/design/ARCHITECTURE.md
// rule 5): a frame is admitted only if it fits whole, and what a Produce
// request decodes to must fit in the room left; a request that does not is
// parked, ahead of the connection's later frames, until the pipeline has
// given the room back, and is then handled as if it had just arrived.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using test::inflating_produce;

class MemoryRoomTest : public test::FrontendFixture {
 protected:
  // A 2 MiB budget (and per-request cap), 1.5 MB of it held by a's run, not
  // yet completed (its 1.4 MB frame and record views; the 1 KB values an
  // upstream batch borrows, not copies); then b's request 7 of about 1 MB
  // decoded from a 3 KB frame, more than the ~0.5 MB left: parked.
  void park_behind_a_full_budget() {
    sink_.set_budget(2 * 1048576);
    FrontendConfig config;
    config.max_decoded_bytes_per_request = 2 * 1048576;
    start(config);
    a_ = connect();
    b_ = connect();
    ASSERT_TRUE(a_->write_raw(test::produce_of_size(1, 1'400'000, 0)));
    ASSERT_TRUE(wait_for_submissions(1));
    held_by_a_ = sink_.buffered();
    ASSERT_TRUE(b_->write_raw(inflating_produce(7, 25000, 1)));
    ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->counters().requests_parked_total == 1; }))
        << "decoded under the per-request cap alone, the request would take the budget over by 0.5 MB";
  }

  std::unique_ptr<test::TestClient> a_;
  std::unique_ptr<test::TestClient> b_;
  std::size_t held_by_a_ = 0;
};

TEST_F(MemoryRoomTest, AFrameThatDoesNotFitWholeWaitsForRoom) {
  sink_.set_budget(100000);
  start();
  auto a = connect();
  auto b = connect();
  ASSERT_TRUE(a->write_raw(test::produce_of_size(1, 60000, 0)));
  ASSERT_TRUE(wait_for_submissions(1));
  ASSERT_FALSE(frontend_->backpressure_active()) << "the budget itself is not over";
  // About 62 KB held (a's frame and its record views): b's 40 KB frame fits
  // in the budget only once a's is done.
  const Bytes late = test::produce_of_size(1, 40000, 1);
  ASSERT_TRUE(b->write_raw(late));
  test::run_for(&loop_, 200);
  EXPECT_EQ(sink_.submissions.size(), 1u) << "admitted under the budget, b's frame would cross it";
  EXPECT_LE(sink_.buffered(), 100000u);
  sink_.complete(0, 0);
  ASSERT_TRUE(a->read_frame());
  ASSERT_TRUE(wait_for_submissions(2)) << "the room a's completion freed wakes b";
  EXPECT_LE(sink_.buffered(), 100000u);
  sink_.complete(1, 60);
  EXPECT_TRUE(b->read_frame());
}

TEST_F(MemoryRoomTest, ARequestDecodingToMoreThanTheRoomIsParkedUntilTheRoomIsThere) {
  ASSERT_NO_FATAL_FAILURE(park_behind_a_full_budget());
  ASSERT_TRUE(b_->write_raw(test::produce_of_size(8, 2000, 2)));
  test::run_for(&loop_, 200);
  EXPECT_EQ(sink_.submissions.size(), 1u) << "neither the parked request nor the one behind it goes ahead";
  EXPECT_LE(sink_.buffered(), 2u * 1048576);

  sink_.complete(0, 0);
  ASSERT_TRUE(a_->read_frame());
  ASSERT_TRUE(wait_for_submissions(3)) << "with the room back, the parked request and then the next are handled";
  EXPECT_EQ(sink_.submissions[1].partition, 1) << "in the order they arrived";
  EXPECT_EQ(sink_.submissions[2].partition, 2);
  EXPECT_EQ(sink_.submissions[1].run.records.at(0).headers.size(), 25000u);
  EXPECT_EQ(frontend_->counters().requests_parked_total, 1u);
  sink_.complete(1, 10);
  sink_.complete(2, 11);
  for (std::int32_t correlation : {7, 8}) {
    auto frame = b_->read_frame();
    ASSERT_TRUE(frame);
    std::int32_t seen = -1;
    auto response = test::decode_response<ProduceResponse>(*frame, correlation == 7 ? 7 : 2, &seen);
    ASSERT_TRUE(response);
    EXPECT_EQ(seen, correlation);
    EXPECT_EQ(response->responses.at(0).partition_responses.at(0).error_code, ErrorCode::kNone);
  }
}

TEST_F(MemoryRoomTest, TheRoomAParkedRequestWaitsForIsNotGivenToNewFrames) {
  ASSERT_NO_FATAL_FAILURE(park_behind_a_full_budget());
  auto c = connect();
  // 300 KB fits in the ~0.5 MB of room, but not beside the 1 MiB reserved
  // for b (and it is larger than the fair-share headroom, 256 KiB).
  ASSERT_TRUE(c->write_raw(test::produce_of_size(3, 300'000, 3)));
  test::run_for(&loop_, 200);
  EXPECT_EQ(sink_.submissions.size(), 1u) << "c's frame would take the room b waits for";
  sink_.complete(0, 0);
  ASSERT_TRUE(wait_for_submissions(3)) << "the room back, b is handled, and c's frame fits beside it";
  EXPECT_EQ(sink_.submissions[1].partition + sink_.submissions[2].partition, 1 + 3);
  EXPECT_LE(sink_.buffered(), 2u * 1048576);
}

TEST_F(MemoryRoomTest, AParkedRequestOfAClosedConnectionGivesItsFrameBack) {
  ASSERT_NO_FATAL_FAILURE(park_behind_a_full_budget());
  EXPECT_GT(sink_.buffered(), held_by_a_) << "the parked frame stays charged while it waits";
  b_->close();
  ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered() == held_by_a_; }))
      << "the frame of a request never taken is released with its connection";
  sink_.complete(0, 0);
  EXPECT_EQ(sink_.submissions.size(), 1u);
}

}  // namespace
}  // namespace pp
