// Cross-check against kafka-python 2.0.2, an independent implementation of the
// record formats (vectors/PROVENANCE.md): decode its batches and message sets
// to the records it was given, and reproduce its uncompressed bytes exactly.
#include <gtest/gtest.h>

#include "proxy/records/message_set.h"
#include "proxy/records/message_set_builder.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

using test::read_vector;
using test::str;

// The inputs of vectors/generate.py.
struct V2Rec {
  std::int64_t timestamp;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const std::vector<V2Rec>& v2_records() {
  static const std::vector<V2Rec> r = {
      {1700000000000, "key-0", "value-0", {}},
      {1700000000005, std::nullopt, repeat("abcdefgh", 40), {{"h1", "x"}, {"h2", std::nullopt}}},
      {1699999999990, "", std::nullopt, {}},
      {1700000000100, "key-3", repeat("0123456789", 30), {{"trace-id", ""}}},
  };
  return r;
}

struct LegacyRec {
  std::int64_t timestamp;
  std::optional<std::string> key, value;
};

const std::vector<LegacyRec>& legacy_records() {
  static const std::vector<LegacyRec> r = {
      {1700000000000, "key-0", "value-0"},
      {1700000000005, std::nullopt, repeat("abcdefgh", 40)},
      {1700000000010, "", std::nullopt},
      {1700000000100, "key-3", repeat("0123456789", 30)},
  };
  return r;
}

std::optional<ByteView> view(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return as_bytes(*s);
}

constexpr std::pair<const char*, CompressionCodec> kV2Files[] = {
    {"v2_none", CompressionCodec::kNone},     {"v2_gzip", CompressionCodec::kGzip},
    {"v2_snappy", CompressionCodec::kSnappy}, {"v2_lz4", CompressionCodec::kLz4},
    {"v2_zstd", CompressionCodec::kZstd},
};

TEST(KafkaPythonVectors, RecordBatchesDecode) {
  for (const auto& [file, codec] : kV2Files) {
    const Bytes wire = read_vector(file);
    auto batch = decode_record_batch(wire);
    ASSERT_TRUE(batch.has_value()) << file << ": " << batch.error().describe();
    const RecordBatchHeader& h = batch->header();
    EXPECT_EQ(h.compression(), codec) << file;
    EXPECT_EQ(h.producer_id, 12345);
    EXPECT_EQ(h.producer_epoch, 7);
    EXPECT_EQ(h.base_sequence, 42);
    EXPECT_EQ(h.partition_leader_epoch, 0);
    EXPECT_EQ(h.last_offset_delta, 3);
    EXPECT_EQ(h.base_timestamp, 1700000000000);
    EXPECT_EQ(h.max_timestamp, 1700000000100);
    const auto& expected = v2_records();
    ASSERT_EQ(batch->records().size(), expected.size()) << file;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const RecordView& r = batch->records()[i];
      EXPECT_EQ(batch->offset_of(r), static_cast<std::int64_t>(i));
      EXPECT_EQ(batch->timestamp_of(r), expected[i].timestamp) << file << " " << i;
      EXPECT_EQ(str(r.key), expected[i].key) << file << " " << i;
      EXPECT_EQ(str(r.value), expected[i].value) << file << " " << i;
      ASSERT_EQ(r.headers.size(), expected[i].headers.size());
      for (std::size_t k = 0; k < r.headers.size(); ++k) {
        EXPECT_EQ(str(r.headers[k].key), expected[i].headers[k].first);
        EXPECT_EQ(str(r.headers[k].value), expected[i].headers[k].second);
      }
    }
  }
}

TEST(KafkaPythonVectors, OurUncompressedBatchIsByteIdentical) {
  RecordBatchBuildOptions o;
  o.partition_leader_epoch = 0;  // kafka-python writes 0 where Java writes -1
  o.producer_id = 12345;
  o.producer_epoch = 7;
  o.base_sequence = 42;
  RecordBatchBuilder b(o);
  for (const V2Rec& r : v2_records()) {
    std::vector<RecordHeaderView> headers;
    for (const auto& [k, v] : r.headers) headers.push_back({as_bytes(k), view(v)});
    b.append(r.timestamp, view(r.key), view(r.value), headers);
  }
  const Bytes ours = b.build();
  const Bytes theirs = read_vector("v2_none");
  EXPECT_EQ(ours, theirs);
}

TEST(KafkaPythonVectors, MessageSetsDecode) {
  for (std::int8_t magic : {0, 1}) {
    for (const char* codec_name : {"none", "gzip", "snappy", "lz4"}) {
      const std::string file = "legacy_v" + std::to_string(magic) + "_" + codec_name;
      const Bytes wire = read_vector(file);
      auto set = decode_message_set(wire);
      ASSERT_TRUE(set.has_value()) << file << ": " << set.error().describe();
      const auto& expected = legacy_records();
      ASSERT_EQ(set->records().size(), expected.size()) << file;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const LegacyRecordView& r = set->records()[i];
        // Wrapper offset 0 (kafka-python): relative offsets taken as they are.
        EXPECT_EQ(r.offset, static_cast<std::int64_t>(i)) << file;
        EXPECT_EQ(r.magic, magic);
        EXPECT_EQ(r.wrapper_codec, *parse_compression_codec(codec_name));
        EXPECT_EQ(str(r.key), expected[i].key) << file << " " << i;
        EXPECT_EQ(str(r.value), expected[i].value) << file << " " << i;
        if (magic == 1) {
          EXPECT_EQ(r.timestamp, expected[i].timestamp) << file << " " << i;
        } else {
          EXPECT_EQ(r.timestamp, std::nullopt);
        }
      }
    }
  }
}

TEST(KafkaPythonVectors, MagicZeroLz4HasTheBrokenHeaderChecksum) {
  // kafka-python's lz4_encode_old_kafka writes the pre-KIP-57 HC: a strict LZ4
  // reader refuses the wrapper's value, our magic-0 path accepts it.
  const Bytes wire = read_vector("legacy_v0_lz4");
  // offset (8), size (4), crc (4), magic (1), attributes (1), key -1 (4), value length (4)
  ASSERT_GT(wire.size(), 26u);
  const ByteView frame = ByteView(wire).subspan(26);
  auto strict = decompress(CompressionCodec::kLz4, frame, 1 << 20);
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.error().kind, DecodeErrorKind::kBadChecksum);
  EXPECT_TRUE(decompress(CompressionCodec::kLz4, frame, 1 << 20, Lz4Framing::kKafkaLegacy).has_value());
}

TEST(KafkaPythonVectors, OurUncompressedMessageSetsAreByteIdentical) {
  for (std::int8_t magic : {0, 1}) {
    MessageSetBuildOptions o;
    o.magic = magic;
    MessageSetBuilder b(o);
    for (const LegacyRec& r : legacy_records()) b.append(r.timestamp, view(r.key), view(r.value));
    EXPECT_EQ(b.build(), read_vector("legacy_v" + std::to_string(magic) + "_none")) << int(magic);
  }
}

TEST(KafkaPythonVectors, OurCompressedMessageSetsDecodeLikeTheirs) {
  // Compressed bytes are not canonical; compare decoded content instead, with
  // kafka-python's wrapper offset of 0.
  for (std::int8_t magic : {0, 1}) {
    for (CompressionCodec codec : {CompressionCodec::kGzip, CompressionCodec::kSnappy, CompressionCodec::kLz4}) {
      MessageSetBuildOptions o;
      o.magic = magic;
      o.compression = codec;
      MessageSetBuilder b(o);
      for (const LegacyRec& r : legacy_records()) b.append(r.timestamp, view(r.key), view(r.value));
      auto ours = decode_message_set(b.build(0));
      auto theirs =
          decode_message_set(read_vector("legacy_v" + std::to_string(magic) + "_" + std::string(to_string(codec))));
      ASSERT_TRUE(ours.has_value());
      ASSERT_TRUE(theirs.has_value());
      ASSERT_EQ(ours->records().size(), theirs->records().size());
      for (std::size_t i = 0; i < ours->records().size(); ++i) {
        EXPECT_EQ(ours->records()[i].offset, theirs->records()[i].offset);
        EXPECT_EQ(str(ours->records()[i].key), str(theirs->records()[i].key));
        EXPECT_EQ(str(ours->records()[i].value), str(theirs->records()[i].value));
        EXPECT_EQ(ours->records()[i].timestamp, theirs->records()[i].timestamp);
      }
    }
  }
}

}  // namespace
}  // namespace pp
