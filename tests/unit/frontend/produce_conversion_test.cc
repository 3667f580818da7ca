// Produce -> record runs, without sockets: every legacy and v2 format and
// codec, per-partition errors, and that runs keep their bytes alive.
// "decision N" cites docs/design/PIPELINE.md.
#include "proxy/frontend/produce_conversion.h"

#include <gtest/gtest.h>

#include "produce_test_support.h"
#include "tests/support/raw_records.h"

namespace pp {
namespace {

using test::ProduceEntry;

std::string str(const std::optional<ByteView>& v) {
  return v ? std::string(v->begin(), v->end()) : "<null>";
}

void expect_records(const PartitionProduce& p, const std::vector<test::TestRecord>& want, bool timestamps) {
  ASSERT_EQ(p.error, ErrorCode::kNone) << p.error_message;
  ASSERT_EQ(p.run.records.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(str(p.run.records[i].key), want[i].key);
    EXPECT_EQ(str(p.run.records[i].value), want[i].value);
    EXPECT_EQ(p.run.records[i].timestamp_ms, timestamps ? want[i].timestamp : -1);
  }
}

struct LegacyCase {
  std::int16_t version;
  std::int8_t magic;
  CompressionCodec codec;
};

class LegacyMessageSets : public ::testing::TestWithParam<LegacyCase> {};

TEST_P(LegacyMessageSets, BecomeOneRunPerPartitionWithKeysValuesAndTimestamps) {
  const LegacyCase c = GetParam();
  const auto records = test::numbered_records(5);
  auto decoded =
      test::decoded_produce(c.version, 1,
                            {{"orders", 0, test::legacy_set(c.magic, c.codec, records)},
                             {"orders", 2, test::legacy_set(c.magic, c.codec, test::numbered_records(2, "b"))}});
  auto converted = convert_produce_request(decoded.request, c.version, decoded.frame);
  decoded.frame.reset();
  decoded.request = {};  // only the runs' storage is left holding the bytes
  ASSERT_EQ(converted.partitions.size(), 2u);
  EXPECT_EQ(converted.partitions[0].partition, 0);
  EXPECT_EQ(converted.partitions[1].partition, 2);
  // Magic 0 has no timestamps: -1, stamped by the pipeline (decision 7).
  expect_records(converted.partitions[0], records, c.magic == 1);
  expect_records(converted.partitions[1], test::numbered_records(2, "b"), c.magic == 1);
  EXPECT_EQ(converted.records, 7u);
}

INSTANTIATE_TEST_SUITE_P(
    AllCodecs, LegacyMessageSets,
    ::testing::Values(LegacyCase{0, 0, CompressionCodec::kNone}, LegacyCase{0, 0, CompressionCodec::kGzip},
                      LegacyCase{0, 0, CompressionCodec::kSnappy}, LegacyCase{0, 0, CompressionCodec::kLz4},
                      LegacyCase{1, 0, CompressionCodec::kGzip}, LegacyCase{2, 1, CompressionCodec::kNone},
                      LegacyCase{2, 1, CompressionCodec::kGzip}, LegacyCase{2, 1, CompressionCodec::kSnappy},
                      LegacyCase{2, 1, CompressionCodec::kLz4}));

class RecordBatches : public ::testing::TestWithParam<CompressionCodec> {};

TEST_P(RecordBatches, KeepHeadersAndCreateTime) {
  const auto records = test::numbered_records(4);
  const RecordHeaderView header{as_bytes("trace"), as_bytes("abc")};
  for (std::int16_t version : {3, 7, 9, 12}) {
    SCOPED_TRACE(version);
    auto decoded = test::decoded_produce(
        version, -1, {{"orders", 1, test::record_batch(GetParam(), records, {}, std::span(&header, 1))}});
    auto converted = convert_produce_request(decoded.request, version, decoded.frame);
    decoded.frame.reset();
    ASSERT_EQ(converted.partitions.size(), 1u);
    expect_records(converted.partitions[0], records, true);
    ASSERT_EQ(converted.partitions[0].run.records[3].headers.size(), 1u);
    EXPECT_EQ(str(converted.partitions[0].run.records[3].headers[0].value), "abc");
  }
}

TEST_P(RecordBatches, OneCreateTimeBatchKeepsItsEncodedRecords) {
  const auto records = test::numbered_records(4);
  const Bytes wire = test::record_batch(GetParam(), records);
  auto decoded = test::decoded_produce(9, -1, {{"orders", 1, wire}});
  auto converted = convert_produce_request(decoded.request, 9, decoded.frame);
  decoded.frame.reset();
  const PartitionProduce& p = converted.partitions.at(0);
  expect_records(p, records, true);
  ASSERT_TRUE(p.run.encoded) << "a batch the pipeline can carry as it is";
  auto original = decode_record_batch(wire);
  ASSERT_TRUE(original);
  EXPECT_EQ(str(p.run.encoded->bytes), str(original->records_bytes())) << "the (decompressed) records section";
  EXPECT_EQ(p.run.encoded->base_timestamp, records.front().timestamp);
  EXPECT_EQ(p.run.encoded->max_timestamp, records.back().timestamp);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, RecordBatches,
                         ::testing::Values(CompressionCodec::kNone, CompressionCodec::kGzip, CompressionCodec::kSnappy,
                                           CompressionCodec::kLz4, CompressionCodec::kZstd));

TEST(ProduceConversion, ABadCrcIsCorruptMessageForThatPartitionOnly) {
  Bytes good = test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(2));
  Bytes bad = good;
  bad.back() ^= 0xff;  // the last value byte: the CRC no longer matches
  auto decoded = test::decoded_produce(2, 1, {{"orders", 0, bad}, {"orders", 1, good}});
  auto converted = convert_produce_request(decoded.request, 2, decoded.frame);
  ASSERT_EQ(converted.partitions.size(), 2u);
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kCorruptMessage);
  EXPECT_TRUE(converted.partitions[0].run.records.empty());
  EXPECT_EQ(converted.partitions[1].error, ErrorCode::kNone);
  EXPECT_EQ(converted.records, 2u);

  Bytes bad_batch = test::record_batch(CompressionCodec::kNone, test::numbered_records(2));
  bad_batch.back() ^= 0x01;  // CRC-32C covers it
  auto v2 = test::decoded_produce(7, 1, {{"orders", 0, bad_batch}});
  EXPECT_EQ(convert_produce_request(v2.request, 7, v2.frame).partitions[0].error, ErrorCode::kCorruptMessage);
}

TEST(ProduceConversion, TheWrongFormatForTheVersionIsInvalidRecord) {
  auto v2_batch_in_v1 = test::decoded_produce(
      1, 1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, test::numbered_records(1))}});
  EXPECT_EQ(convert_produce_request(v2_batch_in_v1.request, 1, v2_batch_in_v1.frame).partitions[0].error,
            ErrorCode::kInvalidRecord);
  auto legacy_in_v3 = test::decoded_produce(
      3, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}});
  EXPECT_EQ(convert_produce_request(legacy_in_v3.request, 3, legacy_in_v3.frame).partitions[0].error,
            ErrorCode::kInvalidRecord);
  auto empty_v3 = test::decoded_produce(3, 1, {{"orders", 0, {}}});
  EXPECT_EQ(convert_produce_request(empty_v3.request, 3, empty_v3.frame).partitions[0].error,
            ErrorCode::kInvalidRecord);
}

TEST(ProduceConversion, AnEmptyLegacySetIsAnEmptyRun) {
  auto decoded = test::decoded_produce(0, 1, {{"orders", 0, {}}});
  auto converted = convert_produce_request(decoded.request, 0, decoded.frame);
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kNone);
  EXPECT_TRUE(converted.partitions[0].run.records.empty());
}

TEST(ProduceConversion, TransactionsAreRefusedIdempotentBatchesTakenAsRecordsWithTheirIdentity) {
  const auto records = test::numbered_records(3);
  auto with_txn_id = test::decoded_produce(7, -1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, records)}},
                                           std::string("txn-1"));
  EXPECT_EQ(convert_produce_request(with_txn_id.request, 7, with_txn_id.frame).partitions[0].error,
            ErrorCode::kTransactionalIdAuthorizationFailed);

  RecordBatchBuildOptions txn;
  txn.producer_id = 42;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  txn.transactional = true;
  auto txn_batch =
      test::decoded_produce(7, -1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, records, txn)}});
  EXPECT_EQ(convert_produce_request(txn_batch.request, 7, txn_batch.frame).partitions[0].error,
            ErrorCode::kTransactionalIdAuthorizationFailed);

  RecordBatchBuildOptions idempotent = txn;
  idempotent.transactional = false;
  auto idem =
      test::decoded_produce(7, -1, {{"orders", 0, test::record_batch(CompressionCodec::kLz4, records, idempotent)}});
  const PartitionProduce converted = convert_produce_request(idem.request, 7, idem.frame).partitions[0];
  expect_records(converted, records, true);
  // Its identity goes to the front end's dedup (ClientProducers).
  ASSERT_TRUE(converted.client_batch);
  EXPECT_EQ(converted.client_batch->producer_id, 42);
  EXPECT_EQ(converted.client_batch->epoch, 0);
  EXPECT_EQ(converted.client_batch->first_sequence, 0);
  EXPECT_EQ(converted.client_batch->last_sequence, 2);
}

TEST(ProduceConversion, AnIdempotentEntryIsOneBatchWithASequence) {
  const auto records = test::numbered_records(2);
  RecordBatchBuildOptions o;
  o.producer_id = 42;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  Bytes two = test::record_batch(CompressionCodec::kNone, records, o);
  o.base_sequence = 2;
  const Bytes second = test::record_batch(CompressionCodec::kNone, records, o);
  two.insert(two.end(), second.begin(), second.end());
  auto doubled = test::decoded_produce(7, -1, {{"orders", 0, two}});
  EXPECT_EQ(convert_produce_request(doubled.request, 7, doubled.frame).partitions[0].error, ErrorCode::kInvalidRecord);
  o.base_sequence = -1;
  auto unsequenced =
      test::decoded_produce(7, -1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, records, o)}});
  const PartitionProduce p = convert_produce_request(unsequenced.request, 7, unsequenced.frame).partitions[0];
  EXPECT_EQ(p.error, ErrorCode::kInvalidRecord);
  EXPECT_FALSE(p.client_batch);
  // Without a producer id: plain records, nothing to deduplicate.
  auto plain = test::decoded_produce(7, -1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, records)}});
  EXPECT_FALSE(convert_produce_request(plain.request, 7, plain.frame).partitions[0].client_batch);
}

TEST(ProduceConversion, IllegalTopicNamesAreRefused) {
  auto decoded = test::decoded_produce(
      2, 1, {{"bad topic!", 0, test::legacy_set(1, CompressionCodec::kNone, test::numbered_records(1))}});
  EXPECT_EQ(convert_produce_request(decoded.request, 2, decoded.frame).partitions[0].error,
            ErrorCode::kInvalidTopicException);
  EXPECT_TRUE(is_legal_topic_name("a.b_c-D9"));
  EXPECT_FALSE(is_legal_topic_name(".."));
  EXPECT_FALSE(is_legal_topic_name(std::string(250, 'a')));
}

TEST(ProduceConversion, DecompressionIsCappedPerRequest) {
  std::vector<test::TestRecord> big(1, {"k", std::string(64 * 1024, 'x'), 1});
  auto decoded = test::decoded_produce(7, 1,
                                       {{"orders", 0, test::record_batch(CompressionCodec::kGzip, big)},
                                        {"orders", 1, test::record_batch(CompressionCodec::kGzip, big)}});
  ProduceConversionOptions options;
  options.max_decompressed_bytes = 100 * 1024;  // room for the first set only
  auto converted = convert_produce_request(decoded.request, 7, decoded.frame, options);
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kNone);
  EXPECT_EQ(converted.partitions[1].error, ErrorCode::kMessageTooLarge);
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

// Issue 14: what the broker would refuse for one record is refused here, for
// that partition alone, before it can share an upstream batch.
constexpr std::int64_t kNow = 1'800'000'000'000;
constexpr std::int64_t kHour = 3'600'000;

ProduceConversionOptions timestamp_limits(std::int64_t after, std::int64_t before) {
  ProduceConversionOptions o;
  o.now_ms = kNow;
  o.timestamp_after_max_ms = after;
  o.timestamp_before_max_ms = before;
  return o;
}

TEST(ProduceConversionLimits, ATimestampTooFarAheadIsInvalidTimestampForItsPartitionOnly) {
  std::vector<test::TestRecord> ahead = {{"k", "now", kNow}, {"k", "late", kNow + kHour + 1}};
  std::vector<test::TestRecord> fine = {{"k", "edge", kNow + kHour}, {"k", "old", 1}};
  for (std::int16_t version : {3, 9, 12}) {
    SCOPED_TRACE(version);
    auto decoded = test::decoded_produce(version, -1,
                                         {{"orders", 0, test::record_batch(CompressionCodec::kNone, ahead)},
                                          {"orders", 1, test::record_batch(CompressionCodec::kLz4, fine)}});
    auto converted = convert_produce_request(decoded.request, version, decoded.frame, timestamp_limits(kHour, -1));
    ASSERT_EQ(converted.partitions.size(), 2u);
    EXPECT_EQ(converted.partitions[0].error, ErrorCode::kInvalidTimestamp);
    EXPECT_NE(converted.partitions[0].error_message.find("record 1"), std::string::npos)
        << converted.partitions[0].error_message;
    EXPECT_TRUE(converted.partitions[0].run.records.empty());
    expect_records(converted.partitions[1], fine, true);
  }
}

TEST(ProduceConversionLimits, LegacyCreateTimeIsCheckedMagicZeroIsNot) {
  std::vector<test::TestRecord> ahead = {{"k", "late", kNow + 2 * kHour}};
  auto magic1 = test::decoded_produce(2, 1, {{"orders", 0, test::legacy_set(1, CompressionCodec::kGzip, ahead)}});
  auto converted = convert_produce_request(magic1.request, 2, magic1.frame, timestamp_limits(kHour, -1));
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kInvalidTimestamp);
  // Magic 0 carries no timestamp: the receive time is used (decision 7).
  auto magic0 = test::decoded_produce(0, 1, {{"orders", 0, test::legacy_set(0, CompressionCodec::kNone, ahead)}});
  converted = convert_produce_request(magic0.request, 0, magic0.frame, timestamp_limits(kHour, -1));
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kNone);
}

TEST(ProduceConversionLimits, ABeforeLimitRefusesOldTimestampsOnlyWhenSet) {
  std::vector<test::TestRecord> old = {{"k", "old", kNow - 2 * kHour}};
  auto decoded = test::decoded_produce(9, -1, {{"orders", 0, test::record_batch(CompressionCodec::kNone, old)}});
  EXPECT_EQ(convert_produce_request(decoded.request, 9, decoded.frame, timestamp_limits(kHour, -1)).partitions[0].error,
            ErrorCode::kNone);
  EXPECT_EQ(
      convert_produce_request(decoded.request, 9, decoded.frame, timestamp_limits(kHour, kHour)).partitions[0].error,
      ErrorCode::kInvalidTimestamp);
  EXPECT_EQ(convert_produce_request(decoded.request, 9, decoded.frame, timestamp_limits(-1, -1)).partitions[0].error,
            ErrorCode::kNone);
}

TEST(ProduceConversionLimits, ARecordThatCannotFitAnUpstreamBatchIsMessageTooLarge) {
  ProduceConversionOptions o;
  o.max_record_batch_bytes = 64 * 1024;
  std::vector<test::TestRecord> big = {{"k", "small", 1}, {"k", std::string(70 * 1024, 'x'), 1}};
  std::vector<test::TestRecord> fits = {{"k", std::string(60 * 1024, 'y'), 1}, {"k", std::string(60 * 1024, 'z'), 1}};
  // Compressed on the wire (a few hundred bytes) and still too large once
  // it is a record of an upstream batch.
  auto decoded = test::decoded_produce(7, 1,
                                       {{"orders", 0, test::record_batch(CompressionCodec::kGzip, big)},
                                        {"orders", 1, test::record_batch(CompressionCodec::kNone, fits)}});
  auto converted = convert_produce_request(decoded.request, 7, decoded.frame, o);
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kMessageTooLarge);
  EXPECT_NE(converted.partitions[0].error_message.find("record 1"), std::string::npos);
  EXPECT_EQ(converted.partitions[1].error, ErrorCode::kNone) << "each record fits alone: the pipeline splits the run";

  auto legacy = test::decoded_produce(1, 1, {{"orders", 0, test::legacy_set(0, CompressionCodec::kSnappy, big)}});
  EXPECT_EQ(convert_produce_request(legacy.request, 1, legacy.frame, o).partitions[0].error,
            ErrorCode::kMessageTooLarge);
}

// Issue 14: the topic's max.message.bytes, learned upstream, judged as Kafka
// judges it: the batch as written, after the pipeline's compression.
TEST(ProduceConversionLimits, ARecordOverItsTopicsMaxMessageBytesIsRefusedForThatTopicOnly) {
  ProduceConversionOptions o;
  o.max_record_batch_bytes = 16 * 1048576;
  o.topic_batch_limit = [](std::string_view topic) -> std::size_t { return topic == "small" ? 4096 : 0; };
  std::vector<test::TestRecord> big = {{"k", "fits", 1}, {"k", std::string(5000, 'x'), 1}};
  std::vector<test::TestRecord> under = {{"k", std::string(3900, 'y'), 1}};
  auto decoded = test::decoded_produce(9, -1,
                                       {{"small", 0, test::record_batch(CompressionCodec::kNone, big)},
                                        {"small", 1, test::record_batch(CompressionCodec::kNone, under)},
                                        {"large", 0, test::record_batch(CompressionCodec::kNone, big)}});
  auto converted = convert_produce_request(decoded.request, 9, decoded.frame, o);
  EXPECT_EQ(converted.partitions[0].error, ErrorCode::kMessageTooLarge);
  EXPECT_NE(converted.partitions[0].error_message.find("record 1"), std::string::npos);
  EXPECT_NE(converted.partitions[0].error_message.find("max.message.bytes upstream is 4096"), std::string::npos)
      << converted.partitions[0].error_message;
  EXPECT_EQ(converted.partitions[1].error, ErrorCode::kNone) << "3,900 bytes and a header fit in 4,096";
  EXPECT_EQ(converted.partitions[2].error, ErrorCode::kNone) << "a topic whose limit is not known";
}

TEST(ProduceConversionLimits, ACompressedUpstreamJudgesTheRecordCompressed) {
  ProduceConversionOptions o;
  o.topic_batch_limit = [](std::string_view) -> std::size_t { return 4096; };
  std::string noise(6000, '\0');
  std::uint32_t x = 2463534242u;
  for (char& c : noise) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x);
  }
  std::vector<test::TestRecord> compressible = {{"k", std::string(6000, 'a'), 1}};
  std::vector<test::TestRecord> incompressible = {{"k", noise, 1}};
  auto decoded = test::decoded_produce(9, -1,
                                       {{"t", 0, test::record_batch(CompressionCodec::kNone, compressible)},
                                        {"t", 1, test::record_batch(CompressionCodec::kNone, incompressible)}});
  auto plain = convert_produce_request(decoded.request, 9, decoded.frame, o);
  EXPECT_EQ(plain.partitions[0].error, ErrorCode::kMessageTooLarge) << "uncompressed upstream: 6,000 bytes";
  EXPECT_EQ(plain.partitions[1].error, ErrorCode::kMessageTooLarge);
  o.compression = CompressionCodec::kLz4;
  auto lz4 = convert_produce_request(decoded.request, 9, decoded.frame, o);
  EXPECT_EQ(lz4.partitions[0].error, ErrorCode::kNone) << "6,000 'a's compress far below 4,096";
  EXPECT_EQ(lz4.partitions[1].error, ErrorCode::kMessageTooLarge) << "noise does not";
  EXPECT_NE(lz4.partitions[1].error_message.find("compressed"), std::string::npos);

  // The legacy path takes the same rule.
  auto legacy = test::decoded_produce(1, 1, {{"t", 0, test::legacy_set(1, CompressionCodec::kNone, incompressible)}});
  EXPECT_EQ(convert_produce_request(legacy.request, 1, legacy.frame, o).partitions[0].error,
            ErrorCode::kMessageTooLarge);
}

TEST(ProduceConversion, EncodedRecordsOnlyWhenTheyCanGoUpstreamAsTheyAre) {
  const auto encoded = [](const std::vector<ProduceEntry>& entries) {
    auto decoded = test::decoded_produce(9, -1, entries);
    auto converted = convert_produce_request(decoded.request, 9, decoded.frame);
    EXPECT_EQ(converted.partitions.at(0).error, ErrorCode::kNone) << converted.partitions[0].error_message;
    return converted.partitions.at(0).run.encoded;
  };
  constexpr std::int64_t kBase = 1'700'000'000'000;
  // Out-of-order timestamps are fine: the max is the records' largest.
  auto plain = encoded({{"t", 0, test::batch_with_deltas({{0, 5}, {1, 0}, {2, 9}, {3, 2}}, kBase)}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->base_timestamp, kBase);
  EXPECT_EQ(plain->max_timestamp, kBase + 9);

  EXPECT_FALSE(encoded({{"t", 0, test::batch_with_deltas({{0, 0}, {2, 1}}, kBase)}})) << "an offset delta skips";
  EXPECT_FALSE(encoded({{"t", 0, test::batch_with_deltas({{1, 0}, {0, 1}}, kBase)}})) << "offset deltas out of order";
  EXPECT_FALSE(encoded({{"t", 0, test::batch_with_deltas({{0, 0}}, -1)}})) << "no timestamp: stamped on receipt";
  EXPECT_FALSE(encoded({{"t", 0, test::batch_with_deltas({{0, 0}}, kBase, TimestampType::kLogAppendTime)}}))
      << "the broker's time, not the client's";
  const Bytes one = test::record_batch(CompressionCodec::kNone, test::numbered_records(2));
  Bytes two = one;
  two.insert(two.end(), one.begin(), one.end());
  EXPECT_FALSE(encoded({{"t", 0, two}})) << "two batches: the second's deltas restart at 0";
}

}  // namespace
}  // namespace pp
