// Every malformed RecordBatch must come back as a DecodeError naming the field
// and the byte offset, never a crash or an allocation sized by the peer.
#include <gtest/gtest.h>

#include <random>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

namespace layout = record_batch_layout;

constexpr CompressionCodec kCodecs[] = {CompressionCodec::kNone, CompressionCodec::kGzip, CompressionCodec::kSnappy,
                                        CompressionCodec::kLz4, CompressionCodec::kZstd};

void restamp_crc(Bytes& batch) {
  WireWriter::put_be(batch.data() + layout::kCrc, crc32c(ByteView(batch).subspan(layout::kAttributes)));
}

// A batch whose records section is `section` as given (already compressed if
// `codec` says so), with RecordsCount `count` and a valid CRC.
Bytes batch_with_section(ByteView section, std::int32_t count, CompressionCodec codec = CompressionCodec::kNone) {
  RecordBatchBuildOptions o;
  RecordBatchBuilder b(o);
  Bytes wire = b.build();
  wire.insert(wire.end(), section.begin(), section.end());
  WireWriter::put_be(wire.data() + layout::kLength, static_cast<std::int32_t>(wire.size() - 12));
  WireWriter::put_be(wire.data() + layout::kRecordsCount, count);
  wire[layout::kAttributes + 1] = static_cast<std::uint8_t>(codec);
  restamp_crc(wire);
  return wire;
}

Bytes good_batch(CompressionCodec codec) {
  RecordBatchBuildOptions o;
  o.compression = codec;
  o.producer_id = 1;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  RecordBatchBuilder b(o);
  const RecordHeaderView headers[] = {{as_bytes("h"), as_bytes("v")}, {as_bytes("n"), std::nullopt}};
  b.append(10, as_bytes("key"), as_bytes("value"), headers);
  b.append(11, std::nullopt, std::nullopt);
  b.append(9, as_bytes(""), as_bytes(std::string(200, 'z')));
  return b.build();
}

void expect_error(const Decoded<RecordBatchView>& r, DecodeErrorKind kind, std::string_view field,
                  std::optional<std::size_t> offset = std::nullopt) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, kind) << r.error().describe();
  EXPECT_EQ(r.error().field, field) << r.error().describe();
  if (offset) {
    EXPECT_EQ(r.error().offset, *offset) << r.error().describe();
  }
}

TEST(RecordBatchMalformed, EveryTruncationFails) {
  for (CompressionCodec codec : kCodecs) {
    const Bytes wire = good_batch(codec);
    test::expect_prefixes_fail(wire, [](ByteView b) { return decode_record_batch(b); });
  }
}

TEST(RecordBatchMalformed, TrailingGarbageFails) {
  for (CompressionCodec codec : kCodecs) {
    const Bytes wire = good_batch(codec);
    test::expect_trailing_garbage_fails(wire, [](ByteView b) { return decode_record_batch(b); });
    Bytes padded = wire;
    padded.push_back(0);
    expect_error(decode_record_batch(padded), DecodeErrorKind::kTrailingBytes, "<after batch>", wire.size());
  }
}

TEST(RecordBatchMalformed, BadCrc) {
  for (CompressionCodec codec : kCodecs) {
    Bytes wire = good_batch(codec);
    wire[wire.size() - 3] ^= 0x01;
    expect_error(decode_record_batch(wire), DecodeErrorKind::kBadChecksum, "crc", 17);
    RecordBatchReadOptions no_crc;
    no_crc.verify_crc = false;
    (void)decode_record_batch(wire, no_crc);  // may or may not decode; must not crash
  }
}

TEST(RecordBatchMalformed, PartitionLeaderEpochIsOutsideTheCrc) {
  Bytes wire = good_batch(CompressionCodec::kNone);
  WireWriter::put_be<std::int32_t>(wire.data() + layout::kPartitionLeaderEpoch, 12345);
  auto r = decode_record_batch(wire);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->header().partition_leader_epoch, 12345);
  wire[layout::kProducerEpoch] ^= 1;  // inside the CRC
  expect_error(decode_record_batch(wire), DecodeErrorKind::kBadChecksum, "crc");
}

TEST(RecordBatchMalformed, MagicOtherThanTwo) {
  for (std::uint8_t magic : {0, 1, 3, 0xff}) {
    Bytes wire = good_batch(CompressionCodec::kNone);
    wire[layout::kMagic] = magic;
    expect_error(decode_record_batch(wire), DecodeErrorKind::kUnsupported, "magic", 16);
    expect_error(decode_record_batch(ByteView(wire).first(61)), DecodeErrorKind::kUnsupported, "magic", 16);
  }
}

TEST(RecordBatchMalformed, BadLengths) {
  Bytes wire = good_batch(CompressionCodec::kNone);
  Bytes negative = wire;
  WireWriter::put_be<std::int32_t>(negative.data() + layout::kLength, -1);
  expect_error(decode_record_batch(negative), DecodeErrorKind::kNegativeLength, "length", 8);
  Bytes short_length = wire;
  WireWriter::put_be<std::int32_t>(short_length.data() + layout::kLength, 48);
  expect_error(decode_record_batch(short_length), DecodeErrorKind::kInvalidValue, "length", 8);
  Bytes long_length = wire;
  WireWriter::put_be<std::int32_t>(long_length.data() + layout::kLength, INT32_MAX);
  expect_error(decode_record_batch(long_length), DecodeErrorKind::kTruncated, "records", wire.size());
}

TEST(RecordBatchMalformed, HugeRecordsCountIsNotAReserve) {
  // 2^31-1 records declared, 10 bytes present: refused before any reserve().
  const Bytes ten(10, 0);
  expect_error(decode_record_batch(batch_with_section(ten, INT32_MAX)), DecodeErrorKind::kLengthTooLarge,
               "records_count", 57);
  expect_error(decode_record_batch(batch_with_section(ten, -1)), DecodeErrorKind::kNegativeLength, "records_count", 57);
  // Same inside a compressed section (checked against the decompressed bytes).
  const Bytes packed = compress(CompressionCodec::kZstd, ten);
  expect_error(decode_record_batch(batch_with_section(packed, INT32_MAX, CompressionCodec::kZstd)),
               DecodeErrorKind::kLengthTooLarge, "records_count", 57);
}

TEST(RecordBatchMalformed, CountDisagreesWithRecords) {
  const Bytes wire = good_batch(CompressionCodec::kNone);
  const ByteView section = ByteView(wire).subspan(61);
  expect_error(decode_record_batch(batch_with_section(section, 2)), DecodeErrorKind::kTrailingBytes, "records");
  auto more = decode_record_batch(batch_with_section(section, 4));
  ASSERT_FALSE(more.has_value());
  EXPECT_EQ(more.error().field, "records[3].length");
  EXPECT_EQ(more.error().kind, DecodeErrorKind::kTruncated);
  EXPECT_EQ(more.error().offset, wire.size());
}

TEST(RecordBatchMalformed, UnknownCodec) {
  for (int codec : {5, 6, 7}) {
    Bytes wire = good_batch(CompressionCodec::kNone);
    wire[layout::kAttributes + 1] = static_cast<std::uint8_t>(codec);
    restamp_crc(wire);
    expect_error(decode_record_batch(wire), DecodeErrorKind::kUnsupported, "attributes.compression", 21);
  }
}

// Records written by hand: each case is one record body and the error it must give.
TEST(RecordBatchMalformed, BadRecordFields) {
  struct Case {
    const char* name;
    Bytes record;  // including its length varint
    DecodeErrorKind kind;
    const char* field;
    std::size_t offset;  // within the record
  };
  const Case cases[] = {
      // length -2 (zigzag 03)
      {"negative length", {0x03, 0, 0, 0, 1, 1, 0}, DecodeErrorKind::kNegativeLength, "records[0].length", 0},
      // length 100 with 6 bytes present
      {"length past end", {0xc8, 0x01, 0, 0, 0, 1, 1, 0}, DecodeErrorKind::kLengthTooLarge, "records[0].length", 0},
      // key length -2
      {"negative key", {0x0c, 0, 0, 0, 0x03, 1, 0}, DecodeErrorKind::kNegativeLength, "records[0].key", 4},
      // key length 10 with 2 bytes left
      {"key past record", {0x0c, 0, 0, 0, 0x14, 1, 0}, DecodeErrorKind::kLengthTooLarge, "records[0].key", 4},
      // value length -5 (zigzag 09)
      {"negative value", {0x0c, 0, 0, 0, 1, 0x09, 0}, DecodeErrorKind::kNegativeLength, "records[0].value", 5},
      // header count -1
      {"negative header count",
       {0x0c, 0, 0, 0, 1, 1, 1},
       DecodeErrorKind::kNegativeLength,
       "records[0].header_count",
       6},
      // header count 1000 with nothing after it
      {"huge header count",
       {0x0e, 0, 0, 0, 1, 1, 0xd0, 0x0f},
       DecodeErrorKind::kLengthTooLarge,
       "records[0].header_count",
       6},
      // null header key
      {"null header key",
       {0x10, 0, 0, 0, 1, 1, 2, 1, 1},
       DecodeErrorKind::kNegativeLength,
       "records[0].headers[0].key",
       7},
      // header value length -3
      {"negative header value",
       {0x12, 0, 0, 0, 1, 1, 2, 2, 'h', 5},
       DecodeErrorKind::kNegativeLength,
       "records[0].headers[0].value",
       9},
      // fields end before Length: one spare byte
      {"spare byte in record", {0x0e, 0, 0, 0, 1, 1, 0, 0x7f}, DecodeErrorKind::kTrailingBytes, "records[0].length", 7},
      // Length too short for its fields
      {"record cut by length", {0x0a, 0, 0, 0, 1, 1, 0}, DecodeErrorKind::kTruncated, "records[0].header_count", 6},
      // offset delta varint of six bytes
      {"varint too long",
       {0x16, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 1, 0},
       DecodeErrorKind::kVarintTooLong,
       "records[0].offset_delta",
       8},
  };
  for (const Case& c : cases) {
    Bytes section = c.record;
    section.resize(std::max<std::size_t>(section.size(), 7), 0);  // room for the count check
    auto r = decode_record_batch(batch_with_section(section, 1));
    ASSERT_FALSE(r.has_value()) << c.name;
    EXPECT_EQ(r.error().kind, c.kind) << c.name << ": " << r.error().describe();
    EXPECT_EQ(r.error().field, c.field) << c.name;
    EXPECT_EQ(r.error().offset, 61 + c.offset) << c.name << ": " << r.error().describe();
  }
}

TEST(RecordBatchMalformed, CompressedSectionErrors) {
  // Garbage where gzip data should be.
  const Bytes junk(40, 0x42);
  auto r = decode_record_batch(batch_with_section(junk, 1, CompressionCodec::kGzip));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "records.gzip");
  EXPECT_GE(r.error().offset, 61u);
  // A record error inside a compressed section names the decompressed bytes.
  const Bytes bad_record = {0x03, 0, 0, 0, 1, 1, 0};
  const Bytes packed = compress(CompressionCodec::kLz4, bad_record);
  r = decode_record_batch(batch_with_section(packed, 1, CompressionCodec::kLz4));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "decompressed_records[0].length");
  EXPECT_EQ(r.error().offset, 0u);
}

TEST(RecordBatchMalformed, DecompressionCapApplies) {
  RecordBatchBuildOptions o;
  o.compression = CompressionCodec::kZstd;
  RecordBatchBuilder b(o);
  const Bytes zeros(1 << 20, 0);
  for (int i = 0; i < 8; ++i) b.append(i, std::nullopt, ByteView(zeros));
  const Bytes wire = b.build();
  EXPECT_LT(wire.size(), 4096u);
  RecordBatchReadOptions small;
  small.max_decompressed_bytes = 1 << 20;
  expect_error(decode_record_batch(wire, small), DecodeErrorKind::kTooLarge, "records.zstd");
  EXPECT_TRUE(decode_record_batch(wire).has_value());
}

TEST(RecordBatchMalformed, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(2024);
  for (CompressionCodec codec : kCodecs) {
    const Bytes good = good_batch(codec);
    for (int i = 0; i < 3000; ++i) {
      Bytes wire = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        // Mostly hit the records, where the CRC would otherwise hide the damage.
        const std::size_t at = rng() % 4 ? 61 + rng() % (wire.size() - 61) : rng() % wire.size();
        wire[at] = static_cast<std::uint8_t>(rng());
      }
      if (rng() % 2) restamp_crc(wire);
      RecordBatchReadOptions o;
      o.max_decompressed_bytes = 1 << 16;
      auto r = decode_record_batch(wire, o);
      if (r.has_value()) {
        EXPECT_EQ(r->records().size(), static_cast<std::size_t>(r->header().records_count));
      } else {
        EXPECT_FALSE(r.error().field.empty());
        EXPECT_LE(r.error().offset, std::max<std::size_t>(wire.size(), 1 << 16) + 16);
      }
    }
  }
}

}  // namespace
}  // namespace pp
