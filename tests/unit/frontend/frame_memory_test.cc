// The front end's share of the one memory budget (issue 14): request frames
// are charged from their size prefix at the size announced, a frame begun
// over the budget waits while one admitted before is finished, a frame that
// does not arrive in time closes its connection, and responses not yet
// written count.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "produce_test_support.h"

namespace pp {
namespace {

using FrameMemoryTest = test::FrontendFixture;

Bytes size_prefix(std::int32_t size) {
  Bytes out(4);
  out[0] = static_cast<std::uint8_t>(size >> 24);
  out[1] = static_cast<std::uint8_t>(size >> 16);
  out[2] = static_cast<std::uint8_t>(size >> 8);
  out[3] = static_cast<std::uint8_t>(size);
  return out;
}

TEST_F(FrameMemoryTest, APartialFrameIsChargedAtItsAnnouncedSizeFromItsPrefix) {
  start();
  auto client = connect();
  Bytes head = size_prefix(100000);
  head.resize(4 + 10, 0);
  ASSERT_TRUE(client->write_raw(head));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered(MemoryUse::kRequestFrames) > 0; }));
  EXPECT_EQ(sink_.buffered(MemoryUse::kRequestFrames), 100000u)
      << "10 bytes read, the other 99,990 reserved: a peer announcing a large frame and trickling it holds the "
         "budget, not memory the budget does not know of";
  client->close();
  ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered() == 0; })) << "a closed connection returns it";
}

TEST_F(FrameMemoryTest, AFrameBegunOverTheBudgetWaitsWhileOneAdmittedBeforeIsFinished) {
  sink_.set_budget(60000);
  start();
  auto a = connect();
  auto b = connect();
  const Bytes big = test::produce_of_size(1, 80000);
  // a's prefix is read under the budget: admitted, and its reservation puts
  // the budget over.
  ASSERT_TRUE(a->write_raw(ByteView(big).subspan(0, 1000)));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return frontend_->backpressure_active(); }));
  // b begins a frame now, larger than the fair-share headroom (1/8 of the
  // budget, FairShareTest): not admitted, so it is charged only what was read.
  const Bytes small = test::produce_of_size(1, 9000, 1);
  ASSERT_TRUE(b->write_raw(ByteView(small).subspan(0, 100)));
  test::run_for(&loop_, 100);
  EXPECT_LT(sink_.buffered(MemoryUse::kRequestFrames), big.size() + small.size() - 200)
      << "b's frame is not reserved while it waits";
  // a's frame is read to its end and handled through the pause: it is what
  // can free the budget.
  ASSERT_TRUE(a->write_raw(ByteView(big).subspan(1000)));
  ASSERT_TRUE(wait_for_submissions(1));
  ASSERT_TRUE(b->write_raw(ByteView(small).subspan(100)));
  test::run_for(&loop_, 100);
  EXPECT_EQ(sink_.submissions.size(), 1u) << "b's frame waits for the budget";
  sink_.complete(0, 0);
  ASSERT_TRUE(a->read_frame());
  ASSERT_TRUE(wait_for_submissions(2)) << "the budget has room again: b is read and handled";
  sink_.complete(1, 80);
  EXPECT_TRUE(b->read_frame());
}

// Issue 17: past its first read, a large frame's body is read straight into
// its buffer; charged and handled exactly as one copied in.
TEST_F(FrameMemoryTest, AFrameReadIntoItsOwnBufferIsChargedAndHandledAsBefore) {
  start();
  auto client = connect();
  std::vector<test::TestRecord> records;
  for (int i = 0; i < 300; ++i) records.push_back({"k", std::to_string(i) + std::string(1000, 'v')});
  const Bytes big =
      test::produce_frame(2, 1, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, records)}});
  ASSERT_TRUE(client->write_raw(ByteView(big).first(1000)));
  ASSERT_TRUE(test::run_until(&loop_, [&] { return sink_.buffered(MemoryUse::kRequestFrames) > 0; }));
  EXPECT_EQ(sink_.buffered(MemoryUse::kRequestFrames), big.size() - 4);
  ASSERT_TRUE(client->write_raw(ByteView(big).subspan(1000, 150000)));
  test::run_for(&loop_, 100);
  EXPECT_EQ(sink_.buffered(MemoryUse::kRequestFrames), big.size() - 4) << "the announced size, however bytes came";
  ASSERT_TRUE(client->write_raw(ByteView(big).subspan(151000)));
  ASSERT_TRUE(wait_for_submissions(1));
  ASSERT_EQ(sink_.submissions[0].run.records.size(), 300u) << "every message's CRC held";
  const auto& last = *sink_.submissions[0].run.records[299].value;
  EXPECT_EQ(std::string(last.begin(), last.end()), "299" + std::string(1000, 'v'));
  sink_.complete(0, 0);
  EXPECT_TRUE(client->read_frame());
}

TEST_F(FrameMemoryTest, AFrameNotCompleteInTimeClosesItsConnection) {
  FrontendConfig config;
  config.frame_timeout_ms = 300;
  start(config);
  auto slow = connect();
  auto fine = connect();
  Bytes head = size_prefix(5000);
  head.resize(4 + 100, 0);
  ASSERT_TRUE(slow->write_raw(head));
  ASSERT_TRUE(slow->wait_closed(5000)) << "one byte now and then must not hold a slot and memory for ever";
  EXPECT_EQ(frontend_->counters().connections_closed_for_errors_total, 1u);
  EXPECT_FALSE(fine->eof()) << "an idle connection without a partial frame stays";
  EXPECT_EQ(sink_.buffered(MemoryUse::kRequestFrames), 0u);
}

TEST_F(FrameMemoryTest, ResponsesNotYetWrittenAreCharged) {
  FrontendConfig config;
  config.max_write_queue_bytes = 64 * 1048576;  // keep reading the whole burst
  start(config);
  auto client = connect();
  client->set_receive_buffer(4096);
  // Thousands of ApiVersions requests the client never reads the answers
  // of: more than the kernel's socket buffers take, so answers queue here.
  Bytes burst;
  for (int i = 0; i < 150000; ++i) {
    RequestHeader h;
    h.api_key = ApiKey::kApiVersions;
    h.api_version = 0;
    h.correlation_id = i;
    h.client_id = "reader-that-does-not-read";
    Bytes f = encode_request_frame(h, ApiVersionsRequest{});
    burst.insert(burst.end(), f.begin(), f.end());
  }
  ASSERT_TRUE(client->write_raw(burst));
  ASSERT_TRUE(test::run_until(
      &loop_, [&] { return sink_.buffered(MemoryUse::kResponses) > 0; }, 20000));
  client->close();
  ASSERT_TRUE(test::run_until(
      &loop_, [&] { return sink_.buffered() == 0; }, 5000));
}

}  // namespace
}  // namespace pp
