#include "proxy/records/record_batch.h"

#include <gtest/gtest.h>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

namespace layout = record_batch_layout;
using test::bytes_of;
using test::str;

constexpr CompressionCodec kCodecs[] = {CompressionCodec::kNone, CompressionCodec::kGzip, CompressionCodec::kSnappy,
                                        CompressionCodec::kLz4, CompressionCodec::kZstd};

struct Rec {
  std::int64_t timestamp;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

std::optional<ByteView> view(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return as_bytes(*s);
}

void append(RecordBatchBuilder& b, const Rec& r) {
  std::vector<RecordHeaderView> headers;
  for (const auto& [k, v] : r.headers) headers.push_back({as_bytes(k), view(v)});
  b.append(r.timestamp, view(r.key), view(r.value), headers);
}

const std::vector<Rec>& sample_records() {
  static const std::vector<Rec> records = {
      {1700000000000, "key-0", "value-0", {}},
      {1700000000005, std::nullopt, std::string(300, 'v'), {{"h1", "x"}, {"h2", std::nullopt}}},
      {1699999999990, "", std::nullopt, {}},
      {1700000000100, std::nullopt, std::nullopt, {{"", ""}}},
  };
  return records;
}

Bytes build_sample(const RecordBatchBuildOptions& options) {
  RecordBatchBuilder b(options);
  for (const Rec& r : sample_records()) append(b, r);
  return b.build();
}

void expect_sample(const RecordBatchView& batch) {
  const auto& expected = sample_records();
  ASSERT_EQ(batch.records().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const RecordView& r = batch.records()[i];
    EXPECT_EQ(batch.offset_of(r), batch.header().base_offset + static_cast<std::int64_t>(i));
    EXPECT_EQ(batch.timestamp_of(r), expected[i].timestamp);
    EXPECT_EQ(str(r.key), expected[i].key) << i;
    EXPECT_EQ(str(r.value), expected[i].value) << i;
    ASSERT_EQ(r.headers.size(), expected[i].headers.size());
    for (std::size_t h = 0; h < r.headers.size(); ++h) {
      EXPECT_EQ(str(r.headers[h].key), expected[i].headers[h].first);
      EXPECT_EQ(str(r.headers[h].value), expected[i].headers[h].second);
    }
  }
}

TEST(RecordBatch, RoundTripsEveryCodec) {
  for (CompressionCodec codec : kCodecs) {
    RecordBatchBuildOptions o;
    o.base_offset = 1000;
    o.producer_id = 77;
    o.producer_epoch = 3;
    o.base_sequence = 9;
    o.compression = codec;
    const Bytes wire = build_sample(o);
    auto batch = decode_record_batch(wire);
    ASSERT_TRUE(batch.has_value()) << to_string(codec) << ": " << batch.error().describe();
    const RecordBatchHeader& h = batch->header();
    EXPECT_EQ(h.base_offset, 1000);
    EXPECT_EQ(h.total_size(), wire.size());
    EXPECT_EQ(h.partition_leader_epoch, -1);
    EXPECT_EQ(h.magic, 2);
    EXPECT_EQ(h.compression(), codec);
    EXPECT_EQ(h.timestamp_type(), TimestampType::kCreateTime);
    EXPECT_FALSE(h.is_transactional());
    EXPECT_FALSE(h.is_control());
    EXPECT_EQ(h.last_offset_delta, 3);
    EXPECT_EQ(h.last_offset(), 1003);
    EXPECT_EQ(h.base_timestamp, 1700000000000);  // the first record's, not the minimum
    EXPECT_EQ(h.max_timestamp, 1700000000100);
    EXPECT_EQ(h.producer_id, 77);
    EXPECT_EQ(h.producer_epoch, 3);
    EXPECT_EQ(h.base_sequence, 9);
    EXPECT_EQ(h.records_count, 4);
    EXPECT_EQ(h.crc, crc32c(ByteView(wire).subspan(21)));
    expect_sample(*batch);
  }
}

TEST(RecordBatch, HeaderDecodesAlone) {
  const Bytes wire = build_sample({});
  auto h = decode_record_batch_header(ByteView(wire).first(61));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->records_count, 4);
  EXPECT_EQ(h->batch_length, static_cast<std::int32_t>(wire.size() - 12));
}

TEST(RecordBatch, AttributesBits) {
  RecordBatchBuildOptions o;
  o.transactional = true;
  o.control = true;
  o.timestamp_type = TimestampType::kLogAppendTime;
  o.compression = CompressionCodec::kLz4;
  const Bytes wire = build_sample(o);
  EXPECT_EQ(wire[21], 0x00);
  EXPECT_EQ(wire[22], 0x3b);  // lz4 (3) | log-append time (8) | transactional (16) | control (32)
  auto batch = decode_record_batch(wire);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->header().is_transactional());
  EXPECT_TRUE(batch->header().is_control());
  EXPECT_FALSE(batch->header().has_delete_horizon());
  // Under LogAppendTime every record carries MaxTimestamp.
  for (const RecordView& r : batch->records()) EXPECT_EQ(batch->timestamp_of(r), 1700000000100);
}

TEST(RecordBatch, ViewsSurviveMove) {
  RecordBatchBuildOptions o;
  o.compression = CompressionCodec::kZstd;
  const Bytes wire = build_sample(o);
  auto batch = decode_record_batch(wire);
  ASSERT_TRUE(batch.has_value());
  RecordBatchView moved = std::move(*batch);
  std::vector<RecordBatchView> many;
  many.push_back(std::move(moved));
  many.push_back(*decode_record_batch(wire));
  expect_sample(many[0]);
  expect_sample(many[1]);
}

TEST(RecordBatch, EncodingOfOneRecordIsKafkas) {
  // Hand-assembled from DefaultRecord's layout: length 7 (zigzag 0e), attributes 0,
  // timestamp delta 0, offset delta 0, key "k" (len 1 -> zigzag 02), value
  // null (01), no headers.
  RecordBatchBuilder b;
  b.append(5, as_bytes("k"), std::nullopt);
  const Bytes wire = b.build();
  const Bytes record(wire.begin() + 61, wire.end());
  EXPECT_EQ(record, (Bytes{0x0e, 0x00, 0x00, 0x00, 0x02, 'k', 0x01, 0x00}));
  EXPECT_EQ(wire.size(), 69u);
}

TEST(RecordBatch, SizeEstimates) {
  RecordBatchBuilder b({}, 1 << 20);
  EXPECT_EQ(b.size_bytes(), 61u);
  const Bytes value(1024, 'x');
  for (int i = 0; i < 50; ++i) {
    const std::size_t predicted = b.size_bytes_with(1000 + i, as_bytes("key"), ByteView(value));
    b.append(1000 + i, as_bytes("key"), ByteView(value));
    EXPECT_EQ(b.size_bytes(), predicted);
  }
  EXPECT_LE(b.size_bytes() - 61, 50 * RecordBatchBuilder::record_size_upper_bound(3, 1024));
  const Bytes wire = b.build();
  // Per record: length (2) + attributes, timestamp delta, offset delta (1 each)
  // + key (1 + 3) + value (2 + 1024) + header count (1).
  EXPECT_EQ(wire.size(), 61u + 50u * 1036u);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size_bytes(), 61u);
}

TEST(RecordBatch, BuilderIsReusable) {
  RecordBatchBuildOptions o;
  o.compression = CompressionCodec::kSnappy;
  RecordBatchBuilder b(o);
  for (int round = 0; round < 3; ++round) {
    for (const Rec& r : sample_records()) append(b, r);
    const Bytes wire = b.build();
    auto batch = decode_record_batch(wire);
    ASSERT_TRUE(batch.has_value());
    expect_sample(*batch);
  }
}

TEST(RecordBatch, EmptyBatch) {
  RecordBatchBuilder b;
  const Bytes wire = b.build();
  ASSERT_EQ(wire.size(), 61u);
  auto batch = decode_record_batch(wire);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->header().last_offset_delta, -1);
  EXPECT_TRUE(batch->records().empty());
}

TEST(RecordBatch, LargeValuesAndManyRecords) {
  for (CompressionCodec codec : kCodecs) {
    RecordBatchBuildOptions o;
    o.compression = codec;
    RecordBatchBuilder b(o, 1 << 20);
    Bytes value(1024);
    for (int i = 0; i < 1000; ++i) {
      for (std::size_t j = 0; j < value.size(); ++j) value[j] = static_cast<std::uint8_t>(i + j / 7);
      b.append(1700000000000 + i, std::nullopt, ByteView(value));
    }
    const Bytes wire = b.build();
    auto batch = decode_record_batch(wire);
    ASSERT_TRUE(batch.has_value()) << to_string(codec);
    ASSERT_EQ(batch->records().size(), 1000u);
    const RecordView& last = batch->records().back();
    EXPECT_EQ(last.offset_delta, 999);
    EXPECT_EQ(batch->timestamp_of(last), 1700000000999);
    EXPECT_EQ((*last.value)[7], static_cast<std::uint8_t>(999 + 1));
  }
}

TEST(RecordBatch, ExtremeTimestampsAndOffsetsWrapLikeJava) {
  RecordBatchBuildOptions o;
  o.base_offset = INT64_MAX;
  RecordBatchBuilder b(o);
  b.append(INT64_MIN, std::nullopt, as_bytes("a"));
  b.append(INT64_MAX, std::nullopt, as_bytes("b"));
  b.append(0, std::nullopt, as_bytes("c"));
  const Bytes wire = b.build();
  auto batch = decode_record_batch(wire);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->timestamp_of(batch->records()[0]), INT64_MIN);
  EXPECT_EQ(batch->timestamp_of(batch->records()[1]), INT64_MAX);
  EXPECT_EQ(batch->timestamp_of(batch->records()[2]), 0);
  EXPECT_EQ(batch->header().max_timestamp, INT64_MAX);
  EXPECT_EQ(batch->offset_of(batch->records()[0]), INT64_MAX);
  EXPECT_EQ(batch->offset_of(batch->records()[1]), INT64_MIN);  // wraps, as Java's long does
}

TEST(PatchProducerState, RestampsAndKeepsCrcValid) {
  for (CompressionCodec codec : kCodecs) {
    RecordBatchBuildOptions o;
    o.producer_id = 5;
    o.producer_epoch = 1;
    o.base_sequence = 100;
    o.compression = codec;
    Bytes wire = build_sample(o);
    const Bytes before = wire;
    patch_producer_state(wire, 123456789012345, 32767, 2147483600);
    auto batch = decode_record_batch(wire);
    ASSERT_TRUE(batch.has_value()) << batch.error().describe();
    EXPECT_EQ(batch->header().producer_id, 123456789012345);
    EXPECT_EQ(batch->header().producer_epoch, 32767);
    EXPECT_EQ(batch->header().base_sequence, 2147483600);
    expect_sample(*batch);
    // Only bytes 17-20 (CRC) and 43-60 changed; the records are untouched.
    for (std::size_t i = 0; i < wire.size(); ++i) {
      if ((i >= 17 && i < 21) || (i >= 43 && i < 61)) continue;
      ASSERT_EQ(wire[i], before[i]) << i;
    }
    // Stamping the original state back gives the original bytes.
    patch_producer_state(wire, 5, 1, 100);
    EXPECT_EQ(wire, before);
  }
}

TEST(Sequence, WrapsFromInt32MaxToZero) {
  EXPECT_EQ(increment_sequence(0, 5), 5);
  EXPECT_EQ(increment_sequence(INT32_MAX, 1), 0);
  EXPECT_EQ(increment_sequence(INT32_MAX - 2, 5), 2);
  EXPECT_EQ(last_sequence(10, 4), 14);
  EXPECT_EQ(last_sequence(INT32_MAX, 0), INT32_MAX);
  EXPECT_EQ(last_sequence(INT32_MAX, 1), 0);
  EXPECT_EQ(last_sequence(INT32_MAX - 1, 3), 1);
  EXPECT_EQ(last_sequence(-1, 3), -1);
  static_assert(last_sequence(2147483647, 2) == 1);
}

TEST(SplitRecordBatches, SplitsConcatenatedBatchesAndReportsPartialTail) {
  Bytes all;
  std::vector<Bytes> batches;
  for (CompressionCodec codec : kCodecs) {
    RecordBatchBuildOptions o;
    o.compression = codec;
    o.base_offset = static_cast<std::int64_t>(batches.size()) * 4;
    batches.push_back(build_sample(o));
    all.insert(all.end(), batches.back().begin(), batches.back().end());
  }
  auto split = split_record_batches(all);
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->batches.size(), batches.size());
  EXPECT_FALSE(split->has_partial());
  for (std::size_t i = 0; i < batches.size(); ++i) {
    EXPECT_TRUE(bytes_equal(split->batches[i], batches[i]));
    auto batch = decode_record_batch(split->batches[i]);
    ASSERT_TRUE(batch.has_value());
    expect_sample(*batch);
  }
  // A Fetch response may cut the last batch anywhere: that is "partial".
  const std::size_t full = all.size() - batches.back().size();
  for (std::size_t cut = full + 1; cut < all.size(); cut += 7) {
    auto s = split_record_batches(ByteView(all).first(cut));
    ASSERT_TRUE(s.has_value()) << cut;
    EXPECT_EQ(s->batches.size(), batches.size() - 1);
    ASSERT_TRUE(s->has_partial());
    EXPECT_EQ(s->partial_offset, full);
    EXPECT_EQ(s->partial.size(), cut - full);
  }
  auto empty = split_record_batches(ByteView{});
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->batches.empty());
  EXPECT_FALSE(empty->has_partial());
}

TEST(SplitRecordBatches, RejectsImpossibleLengthsAndMagics) {
  Bytes wire = build_sample({});
  Bytes neg = wire;
  WireWriter::put_be<std::int32_t>(neg.data() + 8, -5);
  auto r = split_record_batches(neg);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(r.error().field, "batches[0].length");
  EXPECT_EQ(r.error().offset, 8u);
  Bytes tiny = wire;
  WireWriter::put_be<std::int32_t>(tiny.data() + 8, 20);  // < 49 for a v2 batch
  r = split_record_batches(tiny);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
  Bytes magic = wire;
  magic[16] = 3;
  r = split_record_batches(magic);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kUnsupported);
  EXPECT_EQ(r.error().offset, 16u);
}

}  // namespace
}  // namespace pp
