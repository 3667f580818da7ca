// Fair share of the one memory budget (issue 14, docs/design/PIPELINE.md
// "Fair share"): a connection alone may fill the budget; once another
// connection wants memory, one holding its share (budget / active
// connections) starts no new frame while the other's frames are admitted;
// and a connection holding the whole budget (its partition stalled) does not
// starve a newcomer, who gets a bounded headroom over the budget (or over
// what fits in it: a frame is admitted only if it fits whole).
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using FairShareTest = test::FrontendFixture;

bool submitted_to(const test::FakeSink& sink, std::int32_t partition, std::size_t n) {
  std::size_t seen = 0;
  for (const auto& s : sink.submissions) seen += s.partition == partition ? 1 : 0;
  return seen >= n;
}

TEST_F(FairShareTest, AConnectionAloneGetsTheWholeBudget) {
  sink_.set_budget(200000);
  start();
  auto a = connect();
  // Six 24 KB frames, none completed: about 160 KB held (each frame and its
  // record views; the 1 KB values an upstream batch borrows, not copies),
  // well over half the budget. Alone, the connection is entitled to all of it.
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(a->write_raw(test::produce_of_size(i, 24000, 0)));
  ASSERT_TRUE(wait_for_submissions(6)) << "a lone client is not held to a fraction of the budget";
  EXPECT_GT(sink_.buffered(), 100000u);
  EXPECT_EQ(frontend_->counters().share_pauses_total, 0u);
}

TEST_F(FairShareTest, AConnectionOverItsShareWaitsWhileAnotherIsAdmitted) {
  sink_.set_budget(200000);
  start();
  auto a = connect();
  auto b = connect();
  ASSERT_TRUE(a->write_raw(test::produce_of_size(1, 70000, 0)));
  ASSERT_TRUE(a->write_raw(test::produce_of_size(2, 70000, 0)));
  ASSERT_TRUE(wait_for_submissions(2)) << "alone, a takes more than half the budget";
  const Bytes b1 = test::produce_of_size(1, 2000, 1);
  ASSERT_TRUE(b->write_raw(b1));
  ASSERT_TRUE(wait_for_submissions(3)) << "b holds nothing: its frame is admitted";
  ASSERT_LT(sink_.buffered(), 200000u) << "the budget itself still has room";

  // Two connections want memory: a (about 170 KB) is over its half.
  ASSERT_TRUE(a->write_raw(test::produce_of_size(3, 30000, 0)));
  test::run_for(&loop_, 200);
  EXPECT_FALSE(submitted_to(sink_, 0, 3)) << "a's next frame waits: a holds its share";
  EXPECT_GE(frontend_->counters().share_pauses_total, 1u);
  ASSERT_TRUE(b->write_raw(test::produce_of_size(2, 2000, 1)));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return submitted_to(sink_, 1, 2); }))
      << "b, under its share, is admitted meanwhile";

  // a's records are delivered: it is under its share again and goes on.
  sink_.complete(0, 0);
  sink_.complete(1, 10);
  ASSERT_TRUE(test::run_until(&loop_, [&] { return submitted_to(sink_, 0, 3); })) << "a resumes below its share";
  EXPECT_TRUE(a->read_frame());
  EXPECT_TRUE(a->read_frame());
}

TEST_F(FairShareTest, ANewcomerIsAdmittedWhileAnotherHoldsTheWholeBudget) {
  sink_.set_budget(100000);
  start();
  auto hog = connect();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(hog->write_raw(test::produce_of_size(i, 24000, 0)));  // about 32 KB each held
  ASSERT_TRUE(wait_for_submissions(3));
  ASSERT_TRUE(hog->write_raw(test::produce_of_size(3, 24000, 0)));
  test::run_for(&loop_, 200);
  ASSERT_FALSE(submitted_to(sink_, 0, 4)) << "the hog alone filled the budget (its partition never answers)";

  auto newcomer = connect();
  for (int i = 0; i < 3; ++i) {
    const std::size_t before = sink_.submissions.size();
    // One 1 KB record: about 1.2 KB held (its value borrowed); three fit the 12.5 KB
    // headroom even when the front end counts them all within one
    // millisecond (FlowControl::under_share_held is cached that long).
    ASSERT_TRUE(newcomer->write_raw(test::produce_of_size(i, 1000, 1)));
    ASSERT_TRUE(wait_for_submissions(before + 1))
        << "frame " << i << ": the newcomer is admitted, and its request decoded, in the headroom";
    sink_.complete(before, 100 + i);
    ASSERT_TRUE(newcomer->read_frame()) << "and answered";
  }
  ASSERT_TRUE(hog->write_raw(test::produce_of_size(4, 2000, 0)));
  test::run_for(&loop_, 200);
  EXPECT_FALSE(submitted_to(sink_, 0, 4)) << "the hog takes nothing more: only the headroom served";
  EXPECT_EQ(frontend_->counters().requests_parked_total, 0u);

  // The headroom is a bound, not a second budget: a frame larger than it
  // waits for the budget itself.
  const std::size_t before = sink_.submissions.size();
  ASSERT_TRUE(newcomer->write_raw(test::produce_of_size(9, 20000, 1)));
  test::run_for(&loop_, 200);
  EXPECT_EQ(sink_.submissions.size(), before) << "over the headroom (1/8 of the budget): waits";
  EXPECT_LT(sink_.buffered(), 100000u + 100000u / 8) << "held within the budget and the headroom";
  for (std::size_t i = 0; i < 3; ++i) sink_.complete(i, static_cast<std::int64_t>(30 * i));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return submitted_to(sink_, 1, 4); }))
      << "once the hog's records are delivered the budget has room again";
}

}  // namespace
}  // namespace pp
