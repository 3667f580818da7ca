// A client's encoded records carried into a batch of the proxy's own
// (issue 17): same records, the proxy's header, a valid CRC, any codec.
#include <gtest/gtest.h>

#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

using test::str;

struct Sample {
  std::int64_t timestamp;
  std::string key, value;
};

// Timestamps out of order on purpose: the base is the first record's, the
// max is not the last one's.
const std::vector<Sample> kSamples = {
    {1'700'000'000'050, "k0", "v0"}, {1'700'000'000'000, "k1", std::string(500, 'x')}, {1'700'000'000'090, "k2", ""}};

Bytes client_batch(CompressionCodec codec) {
  RecordBatchBuildOptions o;
  o.compression = codec;
  o.producer_id = 77;  // the client's own identity, which must not leak upstream
  o.producer_epoch = 3;
  o.base_sequence = 12;
  RecordBatchBuilder b(o);
  const RecordHeaderView header{as_bytes("trace"), as_bytes("abc")};
  for (const auto& s : kSamples) b.append(s.timestamp, as_bytes(s.key), as_bytes(s.value), std::span(&header, 1));
  return b.build();
}

class AppendEncoded : public ::testing::TestWithParam<std::pair<CompressionCodec, CompressionCodec>> {};

TEST_P(AppendEncoded, CarriesTheRecordsUnderTheProxysHeader) {
  const auto [client_codec, proxy_codec] = GetParam();
  const Bytes wire = client_batch(client_codec);
  auto client = decode_record_batch(wire);
  ASSERT_TRUE(client) << client.error().describe();

  RecordBatchBuildOptions o;
  o.compression = proxy_codec;
  o.producer_id = 1000;
  o.producer_epoch = 0;
  o.base_sequence = 40;
  RecordBatchBuilder builder(o);
  builder.append_encoded(client->records_bytes(), static_cast<std::int32_t>(client->records().size()),
                         client->header().base_timestamp, 1'700'000'000'090, client->records_crc());
  EXPECT_EQ(builder.record_count(), 3);
  EXPECT_EQ(builder.size_bytes(), record_batch_layout::kHeaderSize + client->records_bytes().size());
  const Bytes built = builder.build();

  auto upstream = decode_record_batch(built);  // checks the CRC
  ASSERT_TRUE(upstream) << upstream.error().describe();
  const RecordBatchHeader& h = upstream->header();
  EXPECT_EQ(h.producer_id, 1000);
  EXPECT_EQ(h.producer_epoch, 0);
  EXPECT_EQ(h.base_sequence, 40);
  EXPECT_EQ(h.compression(), proxy_codec);
  EXPECT_EQ(h.last_offset_delta, 2);
  EXPECT_EQ(h.records_count, 3);
  EXPECT_EQ(h.base_timestamp, 1'700'000'000'050);
  EXPECT_EQ(h.max_timestamp, 1'700'000'000'090);
  ASSERT_EQ(upstream->records().size(), kSamples.size());
  for (std::size_t i = 0; i < kSamples.size(); ++i) {
    const RecordView& r = upstream->records()[i];
    EXPECT_EQ(upstream->timestamp_of(r), kSamples[i].timestamp);
    EXPECT_EQ(r.offset_delta, static_cast<std::int32_t>(i));
    EXPECT_EQ(str(r.key), kSamples[i].key);
    EXPECT_EQ(str(r.value), kSamples[i].value);
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(str(r.headers[0].value), "abc");
  }
  // Byte for byte the client's records: nothing was re-encoded.
  EXPECT_EQ(test::str(upstream->records_bytes()), test::str(client->records_bytes()));
}

INSTANTIATE_TEST_SUITE_P(Codecs, AppendEncoded,
                         ::testing::Values(std::pair{CompressionCodec::kNone, CompressionCodec::kNone},
                                           std::pair{CompressionCodec::kGzip, CompressionCodec::kNone},
                                           std::pair{CompressionCodec::kNone, CompressionCodec::kLz4},
                                           std::pair{CompressionCodec::kZstd, CompressionCodec::kSnappy}));

TEST(RecordsCrc, IsTheSectionsOwnWhenTheBatchCrcWasChecked) {
  const Bytes plain = client_batch(CompressionCodec::kNone);
  auto checked = decode_record_batch(plain);
  ASSERT_TRUE(checked);
  EXPECT_EQ(checked->records_crc(), crc32c(checked->records_bytes()));

  RecordBatchReadOptions unchecked_options;
  unchecked_options.verify_crc = false;
  auto unchecked = decode_record_batch(plain, unchecked_options);
  ASSERT_TRUE(unchecked);
  EXPECT_EQ(unchecked->records_crc(), std::nullopt);  // nothing vouches for it

  const Bytes gzip = client_batch(CompressionCodec::kGzip);
  auto compressed = decode_record_batch(gzip);
  ASSERT_TRUE(compressed);
  EXPECT_EQ(compressed->records_crc(), std::nullopt);  // the CRC covers the compressed bytes
}

// The known CRC is what the built batch's CRC comes from (the records are not
// read again), also when the proxy appends records of its own after them.
// Sections from kKnownCrcMinBytes on: smaller ones are read again, which
// costs no more.
TEST(RecordsCrc, BuildsTheSameBatchAsReadingTheRecords) {
  RecordBatchBuilder client_builder;
  const std::string value(1000, 'v');
  for (int i = 0; i < 8; ++i) client_builder.append(1'700'000'000'000 + i, as_bytes("k"), as_bytes(value));
  const Bytes wire = client_builder.build();
  auto client = decode_record_batch(wire);
  ASSERT_TRUE(client);
  ASSERT_GE(client->records_bytes().size(), RecordBatchBuilder::kKnownCrcMinBytes);
  const auto build = [&](std::optional<std::uint32_t> crc) {
    RecordBatchBuildOptions o;
    o.producer_id = 5;
    o.base_sequence = 9;
    RecordBatchBuilder builder(o);
    builder.append_encoded(client->records_bytes(), 8, client->header().base_timestamp, 1'700'000'000'007, crc);
    builder.append(1'700'000'000'100, as_bytes("k3"), as_bytes("v3"));
    return builder.build();
  };
  const Bytes read_again = build(std::nullopt);
  const Bytes from_known = build(client->records_crc());
  EXPECT_EQ(from_known, read_again);
  auto decoded = decode_record_batch(from_known);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->records().size(), 9u);

  const Bytes from_wrong = build(*client->records_crc() ^ 1u);
  auto refused = decode_record_batch(from_wrong);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, DecodeErrorKind::kBadChecksum);
}

// Issue 17: given an owner, an uncompressed batch borrows the section where
// it lies; its bytes on the wire are the same as a copy's, whether its CRC is
// known or read, with records of the proxy's own after it or not.
TEST(BorrowedSection, BuildsTheSameBytesAsTheCopy) {
  for (const auto& [values, value_bytes] : {std::pair{3, 40}, std::pair{8, 1000}}) {
    RecordBatchBuilder client_builder;
    for (int i = 0; i < values; ++i) {
      client_builder.append(1'700'000'000'000 + i, as_bytes("k"), as_bytes(std::string(value_bytes, 'v')));
    }
    const Bytes wire = client_builder.build();
    auto client = decode_record_batch(wire);
    ASSERT_TRUE(client);
    // One section read again, one whose CRC is joined.
    EXPECT_EQ(client->records_bytes().size() >= RecordBatchBuilder::kKnownCrcMinBytes, values == 8);
    for (const bool own_records_after : {false, true}) {
      const auto build = [&](std::shared_ptr<const void> owner) {
        RecordBatchBuildOptions o;
        o.producer_id = 5;
        o.base_sequence = 9;
        RecordBatchBuilder builder(o);
        builder.append_encoded(client->records_bytes(), values, client->header().base_timestamp,
                               client->header().max_timestamp, client->records_crc(), std::move(owner));
        if (own_records_after) builder.append(1'700'000'000'100, as_bytes("k3"), as_bytes("v3"));
        const std::size_t announced = builder.size_bytes();  // the batch's size as the sender counts it
        WireFrame built = builder.build_frame();
        EXPECT_EQ(built.size(), announced);
        return built;
      };
      const WireFrame copied = build(nullptr);
      const WireFrame borrowed = build(std::make_shared<int>(0));
      EXPECT_TRUE(copied.borrowed.empty());
      ASSERT_EQ(borrowed.borrowed.size(), 1u);
      EXPECT_EQ(borrowed.borrowed[0].at, record_batch_layout::kHeaderSize);
      EXPECT_EQ(borrowed.borrowed[0].bytes.data(), client->records_bytes().data()) << "not copied";
      EXPECT_EQ(borrowed.own.size(), copied.own.size() - client->records_bytes().size());
      EXPECT_EQ(borrowed.flatten(), copied.own) << values << " records, own after: " << own_records_after;
      auto decoded = decode_record_batch(borrowed.flatten());
      ASSERT_TRUE(decoded) << decoded.error().describe();
      EXPECT_EQ(decoded->records().size(), static_cast<std::size_t>(values + (own_records_after ? 1 : 0)));
    }
  }
}

TEST(BorrowedSection, ACompressedBatchCopiesItToCompressIt) {
  const Bytes wire = client_batch(CompressionCodec::kNone);
  auto client = decode_record_batch(wire);
  ASSERT_TRUE(client);
  RecordBatchBuildOptions o;
  o.compression = CompressionCodec::kLz4;
  RecordBatchBuilder builder(o);
  builder.append_encoded(client->records_bytes(), 3, client->header().base_timestamp, 1'700'000'000'090,
                         client->records_crc(), std::make_shared<int>(0));
  const WireFrame built = builder.build_frame();
  EXPECT_TRUE(built.borrowed.empty());
  auto decoded = decode_record_batch(built.own);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(test::str(decoded->records_bytes()), test::str(client->records_bytes()));
}

// An epoch bump re-stamps a borrowed batch's header and CRC as it would a
// flat one's, and leaves the client's bytes alone.
TEST(BorrowedSection, PatchingProducerStateMatchesTheFlatBatch) {
  const Bytes wire = client_batch(CompressionCodec::kNone);
  auto client = decode_record_batch(wire);
  ASSERT_TRUE(client);
  const Bytes client_before = wire;
  RecordBatchBuilder builder;
  builder.append_encoded(client->records_bytes(), 3, client->header().base_timestamp, 1'700'000'000'090,
                         client->records_crc(), std::make_shared<int>(0));
  builder.append(1'700'000'000'100, as_bytes("k3"), as_bytes("v3"));
  WireFrame borrowed = builder.build_frame();
  Bytes flat = borrowed.flatten();
  patch_producer_state(borrowed, 4242, 7, 1000);
  patch_producer_state(std::span<std::uint8_t>(flat), 4242, 7, 1000);
  EXPECT_EQ(borrowed.flatten(), flat);
  EXPECT_EQ(wire, client_before);
  auto decoded = decode_record_batch(flat);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->header().producer_id, 4242);
  EXPECT_EQ(decoded->header().producer_epoch, 7);
  EXPECT_EQ(decoded->header().base_sequence, 1000);
}

TEST(AppendEncodedDeathTest, OnlyIntoAnEmptyBuilder) {
  const Bytes wire = client_batch(CompressionCodec::kNone);
  auto client = decode_record_batch(wire);
  ASSERT_TRUE(client);
  RecordBatchBuilder builder;
  builder.append(1, as_bytes("k"), as_bytes("v"));
  EXPECT_DEATH(builder.append_encoded(client->records_bytes(), 3, 1, 1), "encoded records appended");
}

}  // namespace
}  // namespace pp
