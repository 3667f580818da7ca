// With nothing in the pipeline to give memory back, waiting for room would
// wait for nothing, and two requests could wait for each other's frames. A
// request then decodes into the budget's room plus a fixed overdraft (issue
// 14, docs/design/ARCHITECTURE.md rule 5, "Overdraft"), so the budget's
// excess is a constant, not a second budget; an entry that needs more is
// answered NOT_ENOUGH_REPLICAS (retriable, not appended) and goes through
// once the budget has room.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

constexpr std::size_t kBudget = 2 * 1048576;
constexpr std::size_t kOverdraft = 256 * 1024;
constexpr std::size_t kHeldFrame = 2'000'000;  // leaves about 97 KB of room

class DecodeOverdraftTest : public test::FrontendFixture {
 protected:
  // The budget, and the per-request cap, 2 MiB; the holder announces a
  // kHeldFrame request and sends only its first bytes. The budget holds that
  // frame, not yet decoded, and the pipeline nothing.
  void fill_with_a_partial_frame() {
    sink_.set_budget(kBudget);
    FrontendConfig config;
    config.max_decoded_bytes_per_request = kBudget;
    config.decode_overdraft_bytes = kOverdraft;
    start(config);
    holder_ = connect();
    client_ = connect();
    const auto size = static_cast<std::uint32_t>(kHeldFrame);
    const Bytes prefix{static_cast<std::uint8_t>(size >> 24),
                       static_cast<std::uint8_t>(size >> 16),
                       static_cast<std::uint8_t>(size >> 8),
                       static_cast<std::uint8_t>(size),
                       0,
                       0,
                       0,
                       7};
    ASSERT_TRUE(holder_->write_raw(prefix));
    ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered(MemoryUse::kRequestFrames) >= kHeldFrame; }))
        << "the partial frame is charged at its announced size";
    ASSERT_EQ(sink_.memory_budget().draining(), 0u);
  }

  ErrorCode answer_to(std::int32_t correlation) {
    auto frame = client_->read_frame();
    if (!frame) return ErrorCode::kUnknownServerError;
    std::int32_t seen = -1;
    auto response = test::decode_response<ProduceResponse>(*frame, 7, &seen);
    if (!response || seen != correlation) return ErrorCode::kUnknownServerError;
    return response->responses.at(0).partition_responses.at(0).error_code;
  }

  std::unique_ptr<test::TestClient> holder_;
  std::unique_ptr<test::TestClient> client_;
};

TEST_F(DecodeOverdraftTest, ARequestWithinTheRoomAndTheOverdraftIsDecodedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(fill_with_a_partial_frame());
  // About 160 KB decoded: more than the room, less than room and overdraft.
  ASSERT_TRUE(client_->write_raw(test::inflating_produce(7, 4000, 1)));
  ASSERT_TRUE(wait_for_submissions(1));
  EXPECT_EQ(frontend_->counters().requests_parked_total, 0u) << "nothing drains: there is nothing to wait for";
  EXPECT_EQ(frontend_->counters().requests_refused_for_memory_total, 0u);
  EXPECT_GT(sink_.buffered(), kBudget) << "the overdraft was used";
  EXPECT_LE(sink_.buffered(), kBudget + kOverdraft);
  sink_.complete(0, 0);
  EXPECT_EQ(answer_to(7), ErrorCode::kNone);
}

TEST_F(DecodeOverdraftTest, ARequestOverTheRoomAndTheOverdraftIsRefusedForARetry) {
  ASSERT_NO_FATAL_FAILURE(fill_with_a_partial_frame());
  // About 1 MB decoded: under the per-request cap, so a legal request, but
  // decoded at once it would take the budget to about 3 MB.
  ASSERT_TRUE(client_->write_raw(test::inflating_produce(7, 25000, 1)));
  EXPECT_EQ(answer_to(7), ErrorCode::kNotEnoughReplicas)
      << "decoded under the cap alone, the request takes the budget past its overdraft";
  EXPECT_TRUE(sink_.submissions.empty());
  EXPECT_EQ(frontend_->counters().requests_parked_total, 0u);
  EXPECT_EQ(frontend_->counters().requests_refused_for_memory_total, 1u);
  EXPECT_EQ(sink_.buffered(), kHeldFrame) << "what the refused request decoded is given back";

  holder_->close();
  ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered() == 0; }));
  ASSERT_TRUE(client_->write_raw(test::inflating_produce(8, 25000, 1)));
  ASSERT_TRUE(wait_for_submissions(1)) << "with the room back, the retry is taken";
  EXPECT_EQ(sink_.submissions[0].run.records.at(0).headers.size(), 25000u);
  sink_.complete(0, 0);
  EXPECT_EQ(answer_to(8), ErrorCode::kNone);
}

}  // namespace
}  // namespace pp
