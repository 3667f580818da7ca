#include "proxy/records/message_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32.h"
#include "proxy/records/message_set_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

using test::str;

constexpr CompressionCodec kLegacyCodecs[] = {CompressionCodec::kNone, CompressionCodec::kGzip,
                                              CompressionCodec::kSnappy, CompressionCodec::kLz4};

struct Msg {
  std::int64_t timestamp;
  std::optional<std::string> key, value;
};

const std::vector<Msg>& sample() {
  static const std::vector<Msg> msgs = {
      {1700000000000, "key-0", "value-0"},
      {1700000000005, std::nullopt, std::string(300, 'v')},
      {1700000000010, "", std::nullopt},
      {1700000000002, std::nullopt, std::nullopt},
  };
  return msgs;
}

std::optional<ByteView> view(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return as_bytes(*s);
}

Bytes build(std::int8_t magic, CompressionCodec codec, std::optional<std::int64_t> wrapper_offset = {},
            TimestampType type = TimestampType::kCreateTime) {
  MessageSetBuildOptions o;
  o.magic = magic;
  o.compression = codec;
  o.timestamp_type = type;
  MessageSetBuilder b(o);
  for (const Msg& m : sample()) b.append(m.timestamp, view(m.key), view(m.value));
  return b.build(wrapper_offset);
}

void expect_sample(const MessageSetView& set, std::int8_t magic, std::int64_t first_offset, CompressionCodec codec) {
  ASSERT_EQ(set.records().size(), sample().size());
  for (std::size_t i = 0; i < sample().size(); ++i) {
    const LegacyRecordView& r = set.records()[i];
    EXPECT_EQ(r.offset, first_offset + static_cast<std::int64_t>(i));
    EXPECT_EQ(r.magic, magic);
    EXPECT_EQ(r.wrapper_codec, codec);
    EXPECT_EQ(str(r.key), sample()[i].key);
    EXPECT_EQ(str(r.value), sample()[i].value);
    if (magic == 0) {
      EXPECT_EQ(r.timestamp, std::nullopt);
      EXPECT_EQ(r.timestamp_type, TimestampType::kNoTimestamp);
    } else {
      EXPECT_EQ(r.timestamp, sample()[i].timestamp);
      EXPECT_EQ(r.timestamp_type, TimestampType::kCreateTime);
    }
  }
}

TEST(MessageSet, RoundTripsBothMagicsEveryCodec) {
  for (std::int8_t magic : {0, 1}) {
    for (CompressionCodec codec : kLegacyCodecs) {
      const Bytes wire = build(magic, codec);
      auto set = decode_message_set(wire);
      ASSERT_TRUE(set.has_value()) << int(magic) << " " << to_string(codec) << ": " << set.error().describe();
      expect_sample(*set, magic, 0, codec);
      EXPECT_FALSE(set->has_trailing_partial());
    }
  }
}

TEST(MessageSet, PlainLayoutIsKafkas) {
  MessageSetBuilder b(MessageSetBuildOptions{0, CompressionCodec::kNone, std::nullopt, TimestampType::kCreateTime});
  b.append(0, as_bytes("k"), as_bytes("v"));
  const Bytes wire = b.build();
  // offset, size 16, crc, magic 0, attributes 0, key [1]"k", value [1]"v".
  ASSERT_EQ(wire.size(), 12u + 16u);
  EXPECT_EQ(wire[11], 16);
  EXPECT_EQ(wire[16], 0);
  const std::uint32_t crc = crc32_ieee(ByteView(wire).subspan(16));
  EXPECT_EQ(wire[12], static_cast<std::uint8_t>(crc >> 24));
  EXPECT_EQ(wire[15], static_cast<std::uint8_t>(crc));
}

TEST(MessageSet, MagicOneWrapperOffsetsAreRelative) {
  // Wrapper at absolute offset 1003 holding relative 0..3: records 1000..1003.
  auto set = decode_message_set(build(1, CompressionCodec::kGzip, 1003));
  ASSERT_TRUE(set.has_value());
  expect_sample(*set, 1, 1000, CompressionCodec::kGzip);
  // Wrapper offset 0 (some librdkafka versions, kafka-python): relative as-is.
  set = decode_message_set(build(1, CompressionCodec::kSnappy, 0));
  ASSERT_TRUE(set.has_value());
  expect_sample(*set, 1, 0, CompressionCodec::kSnappy);
  // A wrapper offset below the last inner one is corrupt.
  auto bad = decode_message_set(build(1, CompressionCodec::kLz4, 2));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, DecodeErrorKind::kInvalidValue);
  EXPECT_EQ(bad.error().field, "messages[0].offset");
}

TEST(MessageSet, MagicZeroInnerOffsetsAreKept) {
  MessageSetBuildOptions o;
  o.magic = 0;
  o.compression = CompressionCodec::kGzip;
  MessageSetBuilder b(o);
  b.append(7, 0, as_bytes("a"), as_bytes("1"));
  b.append(7, 0, as_bytes("b"), as_bytes("2"));
  b.append(3, 0, as_bytes("c"), as_bytes("3"));
  auto set = decode_message_set(b.build(99));
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->records().size(), 3u);
  EXPECT_EQ(set->records()[0].offset, 7);
  EXPECT_EQ(set->records()[1].offset, 7);
  EXPECT_EQ(set->records()[2].offset, 3);
}

TEST(MessageSet, LogAppendTimeWrapperStampsInnerRecords) {
  auto set = decode_message_set(build(1, CompressionCodec::kGzip, std::nullopt, TimestampType::kLogAppendTime));
  ASSERT_TRUE(set.has_value());
  for (const LegacyRecordView& r : set->records()) {
    EXPECT_EQ(r.timestamp_type, TimestampType::kLogAppendTime);
    EXPECT_EQ(r.timestamp, 1700000000010);  // the wrapper's: the largest inner
  }
}

TEST(MessageSet, MagicZeroLz4UsesTheBrokenChecksumAndIsRead) {
  const Bytes wire = build(0, CompressionCodec::kLz4);
  auto set = decode_message_set(wire);
  ASSERT_TRUE(set.has_value()) << set.error().describe();
  expect_sample(*set, 0, 0, CompressionCodec::kLz4);
  // The same frame under magic 1 must carry a correct checksum.
  Bytes relabelled;
  MessageSetBuildOptions o;
  o.magic = 1;
  o.compression = CompressionCodec::kLz4;
  o.lz4_framing = Lz4Framing::kKafkaLegacy;
  MessageSetBuilder b(o);
  b.append(0, as_bytes("k"), as_bytes("v"));
  auto strict = decode_message_set(b.build());
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.error().kind, DecodeErrorKind::kBadChecksum);
  EXPECT_EQ(strict.error().field, "messages[0].value.lz4");
}

TEST(MessageSet, BadCrc) {
  Bytes wire = build(1, CompressionCodec::kNone);
  wire[40] ^= 0x10;
  auto r = decode_message_set(wire);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kBadChecksum);
  EXPECT_EQ(r.error().field, "messages[0].crc");
  EXPECT_EQ(r.error().offset, 12u);
}

TEST(MessageSet, NestedWrapperIsAnError) {
  // A gzip wrapper whose inner set is itself a compressed wrapper.
  const Bytes inner = build(1, CompressionCodec::kSnappy, 3);
  const Bytes packed = compress(CompressionCodec::kGzip, inner);
  Bytes wire;
  append_legacy_message(wire, 0, 1, 1, 0, std::nullopt, ByteView(packed));
  auto r = decode_message_set(wire);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
  EXPECT_EQ(r.error().field, "messages[0].decompressed[0].attributes.compression");
}

TEST(MessageSet, WrapperProblems) {
  Bytes null_value;
  append_legacy_message(null_value, 0, 1, 2, 0, std::nullopt, std::nullopt);
  auto r = decode_message_set(null_value);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "messages[0].value");

  const Bytes empty_inner = compress(CompressionCodec::kGzip, ByteView{});
  Bytes empty;
  append_legacy_message(empty, 0, 1, 1, 0, std::nullopt, ByteView(empty_inner));
  r = decode_message_set(empty);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "messages[0].value");

  Bytes zstd;
  append_legacy_message(zstd, 0, 1, 4, 0, std::nullopt, as_bytes("x"));
  r = decode_message_set(zstd);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kUnsupported);
  EXPECT_EQ(r.error().field, "messages[0].attributes.compression");
  EXPECT_EQ(r.error().offset, 17u);

  // Inner set cut short inside the compressed value.
  Bytes cut = build(1, CompressionCodec::kNone);
  cut.resize(cut.size() - 3);
  const Bytes packed = compress(CompressionCodec::kGzip, cut);
  Bytes truncated_inner;
  append_legacy_message(truncated_inner, 3, 1, 1, 0, std::nullopt, ByteView(packed));
  r = decode_message_set(truncated_inner);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kTruncated);
  EXPECT_EQ(r.error().field, "messages[0].decompressed[3]");
}

TEST(MessageSet, DecompressedBytesShareOneCap) {
  MessageSetBuildOptions o;
  o.compression = CompressionCodec::kGzip;
  MessageSetBuilder b(o);
  const Bytes zeros(600000, 0);
  b.append(0, std::nullopt, ByteView(zeros));
  const Bytes one = b.build();
  Bytes two = one;
  two.insert(two.end(), one.begin(), one.end());
  MessageSetReadOptions opts;
  opts.max_decompressed_bytes = 1000000;
  EXPECT_TRUE(decode_message_set(one, opts).has_value());
  auto r = decode_message_set(two, opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kTooLarge);
  EXPECT_EQ(r.error().field, "messages[1].value.gzip");
}

TEST(MessageSet, TrailingPartialMessage) {
  const Bytes wire = build(1, CompressionCodec::kNone);
  // Cut somewhere inside the last message.
  Bytes cut(wire.begin(), wire.end() - 5);
  auto rejected = decode_message_set(cut);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().kind, DecodeErrorKind::kTruncated);
  EXPECT_EQ(rejected.error().field, "messages[3]");

  MessageSetReadOptions fetch;
  fetch.trailing_partial = TrailingPartial::kIgnore;
  auto accepted = decode_message_set(cut, fetch);
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->records().size(), 3u);
  ASSERT_TRUE(accepted->has_trailing_partial());
  EXPECT_EQ(*accepted->trailing_partial_offset(), rejected.error().offset);
}

TEST(MessageSet, EveryTruncationAndTrailingGarbage) {
  for (std::int8_t magic : {0, 1}) {
    for (CompressionCodec codec : kLegacyCodecs) {
      const Bytes wire = build(magic, codec);
      // A set cut exactly between two messages is a valid, shorter set.
      std::vector<std::size_t> boundaries;
      for (std::size_t pos = 0; pos < wire.size();) {
        boundaries.push_back(pos);
        pos += 12 + (static_cast<std::size_t>(wire[pos + 8]) << 24 | wire[pos + 9] << 16 | wire[pos + 10] << 8 |
                     wire[pos + 11]);
      }
      for (std::size_t n = 0; n < wire.size(); ++n) {
        auto r = decode_message_set(ByteView(wire).first(n));
        const bool boundary = std::find(boundaries.begin(), boundaries.end(), n) != boundaries.end();
        EXPECT_EQ(r.has_value(), boundary) << int(magic) << " " << to_string(codec) << " prefix " << n;
        if (!r.has_value()) {
          EXPECT_FALSE(r.error().field.empty());
        }
      }
      test::expect_trailing_garbage_fails(wire, [](ByteView b) { return decode_message_set(b); });
    }
  }
}

TEST(MessageSet, BadSizesAndMagics) {
  Bytes wire = build(1, CompressionCodec::kNone);
  Bytes negative = wire;
  WireWriter::put_be<std::int32_t>(negative.data() + 8, -1);
  auto r = decode_message_set(negative);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(r.error().field, "messages[0].message_size");
  EXPECT_EQ(r.error().offset, 8u);
  Bytes small = wire;
  WireWriter::put_be<std::int32_t>(small.data() + 8, 13);
  r = decode_message_set(small);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kInvalidValue);
  Bytes magic2 = wire;
  magic2[16] = 2;
  r = decode_message_set(magic2);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kUnsupported);
  EXPECT_EQ(r.error().field, "messages[0].magic");
  EXPECT_EQ(r.error().offset, 16u);

  // Key length past the message, with a valid CRC.
  Bytes msg;
  append_legacy_message(msg, 0, 0, 0, 0, as_bytes("abc"), as_bytes("d"));
  WireWriter::put_be<std::int32_t>(msg.data() + 18, 50);
  WireWriter::put_be(msg.data() + 12, crc32_ieee(ByteView(msg).subspan(16)));
  r = decode_message_set(msg);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kLengthTooLarge);
  EXPECT_EQ(r.error().field, "messages[0].key");
  EXPECT_EQ(r.error().offset, 18u);
  // Spare bytes after the value, inside the message and the CRC.
  Bytes spare;
  append_legacy_message(spare, 0, 0, 0, 0, as_bytes("abc"), as_bytes("d"));
  spare.push_back(0);
  WireWriter::put_be<std::int32_t>(spare.data() + 8, static_cast<std::int32_t>(spare.size() - 12));
  WireWriter::put_be(spare.data() + 12, crc32_ieee(ByteView(spare).subspan(16)));
  r = decode_message_set(spare);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, DecodeErrorKind::kTrailingBytes);
  // A magic-1 message too short for its timestamp.
  Bytes short_v1;
  append_legacy_message(short_v1, 0, 0, 0, 0, std::nullopt, std::nullopt);
  short_v1[16] = 1;
  WireWriter::put_be(short_v1.data() + 12, crc32_ieee(ByteView(short_v1).subspan(16)));
  r = decode_message_set(short_v1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "messages[0].message_size");
}

TEST(MessageSet, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(77);
  for (std::int8_t magic : {0, 1}) {
    for (CompressionCodec codec : kLegacyCodecs) {
      const Bytes good = build(magic, codec);
      for (int i = 0; i < 1500; ++i) {
        Bytes wire = good;
        wire[rng() % wire.size()] = static_cast<std::uint8_t>(rng());
        // Re-stamp the outer CRC so the damage reaches the parser.
        if (rng() % 2 && wire.size() > 16) {
          WireWriter::put_be(wire.data() + 12, crc32_ieee(ByteView(wire).subspan(16, wire.size() - 16)));
        }
        MessageSetReadOptions o;
        o.max_decompressed_bytes = 1 << 16;
        o.trailing_partial = rng() % 2 ? TrailingPartial::kIgnore : TrailingPartial::kReject;
        auto r = decode_message_set(wire, o);
        if (!r.has_value()) {
          EXPECT_FALSE(r.error().field.empty());
        }
      }
    }
  }
}

}  // namespace
}  // namespace pp
