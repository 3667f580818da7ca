// PartitionLog's retention bound (--retain-log-bytes): past it the oldest
// batches' payload is released, their metadata stays, and the log start
// advances to the oldest batch still holding bytes.
#include "tests/broker/partition_log.h"

#include <gtest/gtest.h>

#include "proxy/records/record_batch.h"
#include "tests/integration/broker/broker_test_util.h"

namespace pp::test_broker {
namespace {

using testing::make_batch;

constexpr int kRecordsPerBatch = 2;
constexpr std::int64_t kTimestamp = 1'700'000'000'000;

// Appends one idempotent batch of kRecordsPerBatch records, as handle_produce
// would: sequences continue from the log end, timestamps from `timestamp`.
std::int64_t append_batch(PartitionLog& log, std::int64_t timestamp = kTimestamp) {
  const auto sequence = static_cast<std::int32_t>(log.log_end_offset());
  const Bytes bytes = make_batch({.sequence = sequence, .records = kRecordsPerBatch, .timestamp = timestamp});
  AppendedBatch meta;
  meta.last_offset_delta = kRecordsPerBatch - 1;
  meta.producer_id = 1000;
  meta.producer_epoch = 0;
  meta.base_sequence = sequence;
  meta.record_count = kRecordsPerBatch;
  meta.max_timestamp = timestamp + kRecordsPerBatch - 1;
  meta.leader = 1;
  std::vector<AppendedRecord> records;
  for (int i = 0; i < kRecordsPerBatch; ++i) {
    AppendedRecord r;
    r.offset = log.log_end_offset() + i;
    r.producer_id = 1000;
    r.producer_epoch = 0;
    r.sequence = sequence + i;
    r.timestamp = timestamp + i;
    r.key = Bytes{'k'};
    r.value = Bytes{'v', static_cast<std::uint8_t>('0' + i)};
    records.push_back(std::move(r));
  }
  return log.append(bytes, std::move(meta), std::move(records));
}

// The size of every test batch while sequences stay single-digit (offsets
// below 10): make_batch's values carry the sequence.
std::size_t batch_size() {
  return make_batch({.sequence = 0, .records = kRecordsPerBatch}).size();
}

// A log of five batches (offsets 0..9) that keeps the payload of two.
PartitionLog five_batches_keeping_two() {
  PartitionLog log;
  log.set_retention_bytes(2 * batch_size() + 1);
  for (int i = 0; i < 5; ++i) append_batch(log);
  return log;
}

TEST(PartitionLogRetention, WithoutABoundEverythingIsKept) {
  PartitionLog log;
  for (int i = 0; i < 5; ++i) append_batch(log);
  EXPECT_EQ(log.log_start_offset(), 0);
  EXPECT_EQ(log.stored_bytes(), 5 * batch_size());
  for (const auto& r : log.records()) EXPECT_TRUE(r.value.has_value()) << r.offset;
  EXPECT_EQ(log.read(0, 1 << 20).size(), 5 * batch_size());
}

TEST(PartitionLogRetention, ReleasesTheOldestPayloadButKeepsTheMetadata) {
  const PartitionLog log = five_batches_keeping_two();
  EXPECT_EQ(log.stored_bytes(), 2 * batch_size());
  EXPECT_EQ(log.log_start_offset(), 6);
  EXPECT_EQ(log.log_end_offset(), 10);
  ASSERT_EQ(log.batches().size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& b = log.batches()[i];
    EXPECT_EQ(b.bytes.empty(), i < 3) << i;
    EXPECT_EQ(b.base_offset, static_cast<std::int64_t>(2 * i));
    EXPECT_EQ(b.base_sequence, static_cast<std::int32_t>(2 * i));
    EXPECT_EQ(b.producer_id, 1000);
    EXPECT_EQ(b.record_count, kRecordsPerBatch);
  }
  ASSERT_EQ(log.record_count(), 10);
  for (const auto& r : log.records()) {
    EXPECT_EQ(r.key.has_value(), r.offset >= 6) << r.offset;
    EXPECT_EQ(r.value.has_value(), r.offset >= 6) << r.offset;
    EXPECT_EQ(r.sequence, r.offset);
    EXPECT_EQ(r.producer_id, 1000);
    EXPECT_EQ(r.timestamp, kTimestamp + r.offset % 2);
  }
}

TEST(PartitionLogRetention, ReadServesOnlyRetainedBatches) {
  const PartitionLog log = five_batches_keeping_two();
  const Bytes from_start = log.read(6, 1 << 20);
  ASSERT_EQ(from_start.size(), 2 * batch_size());
  auto header = decode_record_batch_header(from_start);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->base_offset, 6);
  EXPECT_EQ(log.read(7, 1).size(), batch_size());  // KIP-74: one whole batch
  EXPECT_EQ(log.read(0, 1 << 20), from_start);     // never a released batch
}

TEST(PartitionLogRetention, TheNewestBatchIsAlwaysKept) {
  PartitionLog log;
  log.set_retention_bytes(1);
  for (int i = 0; i < 3; ++i) append_batch(log);
  EXPECT_EQ(log.stored_bytes(), batch_size());
  EXPECT_EQ(log.log_start_offset(), 4);
  EXPECT_EQ(log.read(4, 1).size(), batch_size());
}

TEST(PartitionLogRetention, TimestampLookupsSeeOnlyRetainedRecords) {
  PartitionLog log;
  log.set_retention_bytes(batch_size());
  append_batch(log, 2 * kTimestamp);  // the largest timestamp, released below
  append_batch(log);
  append_batch(log);
  ASSERT_EQ(log.log_start_offset(), 4);
  auto newest = log.max_timestamp_offset();
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->offset, 5);
  EXPECT_EQ(newest->timestamp, kTimestamp + 1);
  auto first = log.offset_for_timestamp(0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->offset, 4);
  EXPECT_FALSE(log.offset_for_timestamp(kTimestamp + 2));  // only the released batch had one
}

TEST(PartitionLogRetention, TruncatingTheRetainedTailOnlyKeepsTheStart) {
  PartitionLog log = five_batches_keeping_two();
  log.truncate_last_batches(1);
  EXPECT_EQ(log.log_end_offset(), 8);
  EXPECT_EQ(log.log_start_offset(), 6);
  EXPECT_EQ(log.stored_bytes(), batch_size());
  EXPECT_EQ(log.read(6, 1 << 20).size(), batch_size());
}

TEST(PartitionLogRetention, TruncatingIntoReleasedBatchesClampsTheStartToTheEnd) {
  PartitionLog log = five_batches_keeping_two();
  log.truncate_last_batches(3);  // both retained batches and one released
  EXPECT_EQ(log.log_end_offset(), 4);
  EXPECT_EQ(log.log_start_offset(), 4);
  EXPECT_EQ(log.stored_bytes(), 0u);
  EXPECT_EQ(log.record_count(), 4);
  EXPECT_TRUE(log.read(4, 1 << 20).empty());
  EXPECT_FALSE(log.max_timestamp_offset());
  // The next append starts the retained log again at the end.
  EXPECT_EQ(append_batch(log), 4);
  EXPECT_EQ(log.log_start_offset(), 4);
  EXPECT_EQ(log.stored_bytes(), batch_size());
  EXPECT_EQ(log.read(4, 1 << 20).size(), batch_size());
  append_batch(log);  // offsets 6-7
  append_batch(log);  // 8-9: three batches, so the one at 4 is released
  EXPECT_EQ(log.stored_bytes(), 2 * batch_size());
  EXPECT_EQ(log.log_start_offset(), 6);
}

}  // namespace
}  // namespace pp::test_broker
