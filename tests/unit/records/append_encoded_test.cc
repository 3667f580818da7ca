// A client's encoded records carried into a batch of the proxy's own
// (issue 17): same records, the proxy's header, a valid CRC, any codec.
#include <gtest/gtest.h>

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
                         client->header().base_timestamp, 1'700'000'000'090);
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
