// The memory a decoded set takes is charged before it is allocated (issue 14:
// one record of 3,000,000 empty headers, 5 MiB on the wire, grew RSS by
// 243 MiB). Every header is 2 bytes on the wire and a RecordHeaderView in
// memory; the budget counts the latter.
#include "proxy/records/decode_budget.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "proxy/records/message_set.h"
#include "proxy/records/message_set_builder.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {
namespace {

constexpr std::size_t kHeaders = 10000;

// One record whose `kHeaders` headers have an empty key and an empty value.
Bytes batch_of_empty_headers(CompressionCodec codec) {
  static const std::vector<RecordHeaderView> headers(kHeaders, RecordHeaderView{ByteView{}, ByteView{}});
  RecordBatchBuildOptions o;
  o.compression = codec;
  RecordBatchBuilder b(o);
  b.append(1700000000000, std::nullopt, as_bytes("hello"), headers);
  return b.build();
}

TEST(DecodeBudget, TakesWhatFitsAndNeverOverflows) {
  DecodeBudget budget(100);
  EXPECT_TRUE(budget.take(10, 9));
  EXPECT_EQ(budget.used(), 90u);
  EXPECT_FALSE(budget.take(11));
  EXPECT_EQ(budget.used(), 90u);
  EXPECT_FALSE(budget.take(std::numeric_limits<std::size_t>::max(), 2));
  EXPECT_TRUE(budget.take(std::numeric_limits<std::size_t>::max(), 0));
  EXPECT_TRUE(budget.take(10));
  EXPECT_EQ(budget.left(), 0u);
}

TEST(DecodeBudget, HeadersAreChargedAtTheirMemorySizeBeforeTheyAreDecoded) {
  for (CompressionCodec codec : {CompressionCodec::kNone, CompressionCodec::kGzip}) {
    const Bytes wire = batch_of_empty_headers(codec);
    // Room for the wire bytes many times over, not for 10,000 header views.
    DecodeBudget budget(kHeaders * sizeof(RecordHeaderView) - 1);
    RecordBatchReadOptions options;
    options.budget = &budget;
    auto batch = decode_record_batch(wire, options);
    ASSERT_FALSE(batch.has_value());
    EXPECT_EQ(batch.error().kind, DecodeErrorKind::kOverBudget);
    EXPECT_EQ(batch.error().field,
              codec == CompressionCodec::kNone ? "records[0].header_count" : "decompressed_records[0].header_count");
    // Refused at the count: only the record itself (and what was inflated) was charged.
    const std::size_t inflated = codec == CompressionCodec::kNone ? 0 : 2 * kHeaders + 20;
    EXPECT_LE(budget.used(), sizeof(RecordView) + inflated);
  }
}

TEST(DecodeBudget, AnAcceptedBatchChargesItsViewsAndWhatItInflated) {
  for (CompressionCodec codec : {CompressionCodec::kNone, CompressionCodec::kGzip}) {
    const Bytes wire = batch_of_empty_headers(codec);
    DecodeBudget budget(1 << 20);
    RecordBatchReadOptions options;
    options.budget = &budget;
    auto batch = decode_record_batch(wire, options);
    ASSERT_TRUE(batch.has_value()) << batch.error().describe();
    ASSERT_EQ(batch->records().size(), 1u);
    EXPECT_EQ(batch->records()[0].headers.size(), kHeaders);
    const std::size_t views = sizeof(RecordView) + kHeaders * sizeof(RecordHeaderView);
    if (codec == CompressionCodec::kNone) {
      EXPECT_EQ(budget.used(), views);
    } else {
      // The decompressed section: the record's 2-byte headers and a few more bytes.
      EXPECT_GT(budget.used(), views + 2 * kHeaders);
      EXPECT_LT(budget.used(), views + 2 * kHeaders + 32);
    }
  }
}

TEST(DecodeBudget, InflatingPastTheBudgetIsOverBudgetNotTooLarge) {
  const Bytes wire = batch_of_empty_headers(CompressionCodec::kGzip);
  DecodeBudget budget(1000);  // less than the 20,000 bytes the section inflates to
  RecordBatchReadOptions options;
  options.budget = &budget;
  auto batch = decode_record_batch(wire, options);
  ASSERT_FALSE(batch.has_value());
  EXPECT_EQ(batch.error().kind, DecodeErrorKind::kOverBudget);
  // The decompression cap itself still reads as kTooLarge.
  options.budget = nullptr;
  options.max_decompressed_bytes = 1000;
  auto capped = decode_record_batch(wire, options);
  ASSERT_FALSE(capped.has_value());
  EXPECT_EQ(capped.error().kind, DecodeErrorKind::kTooLarge);
}

TEST(DecodeBudget, LegacyMessagesAreChargedOneByOne) {
  for (CompressionCodec codec : {CompressionCodec::kNone, CompressionCodec::kGzip}) {
    MessageSetBuildOptions o;
    o.magic = 1;
    o.compression = codec;
    MessageSetBuilder builder(o);
    for (int i = 0; i < 1000; ++i) builder.append(1700000000000, std::nullopt, as_bytes("v"));
    const Bytes set = builder.build();
    DecodeBudget roomy(1 << 20);
    MessageSetReadOptions options;
    options.budget = &roomy;
    auto decoded = decode_message_set(set, options);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
    EXPECT_GE(roomy.used(), 1000 * sizeof(LegacyRecordView));
    DecodeBudget tight(100 * sizeof(LegacyRecordView));
    options.budget = &tight;
    auto refused = decode_message_set(set, options);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().kind, DecodeErrorKind::kOverBudget);
    EXPECT_LE(tight.used(), tight.cap());
  }
}

}  // namespace
}  // namespace pp
