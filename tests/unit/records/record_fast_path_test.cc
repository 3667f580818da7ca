// The fast record decoder (issue 17) must change nothing but the cost: every
// batch, well formed or not, decodes to the same records, or fails with the
// same error kind, offset and field, and charges the same budget, as with the
// checked reader alone (RecordBatchReadOptions::fast_records = false).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {
namespace {

namespace layout = record_batch_layout;

// The records section as given, with Length and RecordsCount to match; the CRC
// is left stale (decoded with verify_crc off).
Bytes batch_with_section(ByteView section, std::int32_t count, CompressionCodec codec = CompressionCodec::kNone) {
  RecordBatchBuilder builder;
  Bytes wire = builder.build();
  const Bytes packed =
      codec == CompressionCodec::kNone ? Bytes(section.begin(), section.end()) : compress(codec, section);
  wire.insert(wire.end(), packed.begin(), packed.end());
  WireWriter::put_be(wire.data() + layout::kLength, static_cast<std::int32_t>(wire.size() - layout::kLogOverhead));
  WireWriter::put_be(wire.data() + layout::kRecordsCount, count);
  wire[layout::kAttributes + 1] = static_cast<std::uint8_t>(codec);
  return wire;
}

// A record body (attributes to headers) behind its zigzag length.
Bytes with_length(const Bytes& body) {
  Bytes out;
  WireWriter w(out);
  w.varint(static_cast<std::int32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// Same presence and the same place in the records section (each decode of a
// compressed batch has its own decompressed copy).
bool same_view(std::optional<ByteView> a, ByteView a_section, std::optional<ByteView> b, ByteView b_section) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->data() - a_section.data() == b->data() - b_section.data() && a->size() == b->size());
}

::testing::AssertionResult same_records(const RecordBatchView& fast, const RecordBatchView& checked) {
  if (fast.records().size() != checked.records().size()) {
    return ::testing::AssertionFailure() << fast.records().size() << " records vs " << checked.records().size();
  }
  const ByteView fast_section = fast.records_bytes();
  const ByteView checked_section = checked.records_bytes();
  const auto same_place = [&](std::optional<ByteView> a, std::optional<ByteView> b) {
    return same_view(a, fast_section, b, checked_section);
  };
  for (std::size_t i = 0; i < fast.records().size(); ++i) {
    const RecordView& a = fast.records()[i];
    const RecordView& b = checked.records()[i];
    bool same = a.attributes == b.attributes && a.timestamp_delta == b.timestamp_delta &&
                a.offset_delta == b.offset_delta && same_place(a.key, b.key) && same_place(a.value, b.value) &&
                a.headers.size() == b.headers.size();
    for (std::size_t h = 0; same && h < a.headers.size(); ++h) {
      same = same_place(a.headers[h].key, b.headers[h].key) && same_place(a.headers[h].value, b.headers[h].value);
    }
    if (!same) return ::testing::AssertionFailure() << "record " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

enum class Outcome { kDecoded, kRefused };

// Decodes `wire` both ways (with a budget of `budget_cap` if given) and checks
// they agree; returns what both did.
Outcome expect_same_decode(ByteView wire, std::optional<std::size_t> budget_cap = std::nullopt) {
  RecordBatchReadOptions fast_options;
  fast_options.verify_crc = false;
  fast_options.max_decompressed_bytes = 1 << 16;
  RecordBatchReadOptions checked_options = fast_options;
  checked_options.fast_records = false;
  std::optional<DecodeBudget> fast_budget;
  std::optional<DecodeBudget> checked_budget;
  if (budget_cap) {
    fast_options.budget = &fast_budget.emplace(*budget_cap);
    checked_options.budget = &checked_budget.emplace(*budget_cap);
  }
  const auto fast = decode_record_batch(wire, fast_options);
  const auto checked = decode_record_batch(wire, checked_options);
  if (budget_cap) {
    EXPECT_EQ(fast_budget->used(), checked_budget->used()) << "budget charged differently";
  }
  EXPECT_EQ(fast.has_value(), checked.has_value())
      << (fast ? "fast decoded, checked: " + checked.error().describe() : "fast: " + fast.error().describe());
  if (fast.has_value() != checked.has_value()) return Outcome::kRefused;
  if (fast) {
    EXPECT_TRUE(same_records(*fast, *checked));
    return Outcome::kDecoded;
  }
  EXPECT_EQ(fast.error().kind, checked.error().kind) << checked.error().describe();
  EXPECT_EQ(fast.error().offset, checked.error().offset) << checked.error().describe();
  EXPECT_EQ(fast.error().field, checked.error().field) << checked.error().describe();
  return Outcome::kRefused;
}

// Small, and touching every field: null and empty keys and values, headers
// with and without a value, a delta below the base timestamp.
Bytes small_batch(CompressionCodec codec = CompressionCodec::kNone) {
  RecordBatchBuildOptions o;
  o.compression = codec;
  RecordBatchBuilder b(o);
  const RecordHeaderView headers[] = {{as_bytes("h"), as_bytes("v")}, {as_bytes(""), std::nullopt}};
  b.append(1000, as_bytes("key"), as_bytes("value"), headers);
  b.append(999, std::nullopt, std::nullopt);
  b.append(1001, as_bytes(""), as_bytes("z"));
  return b.build();
}

TEST(RecordFastPath, WellFormedBatchesDecodeAlike) {
  const Bytes long_value(300, 'v');  // a two-byte length varint
  const std::vector<RecordHeaderView> many_headers(70, RecordHeaderView{as_bytes("k"), as_bytes("v")});
  for (CompressionCodec codec : {CompressionCodec::kNone, CompressionCodec::kGzip, CompressionCodec::kZstd}) {
    RecordBatchBuildOptions o;
    o.compression = codec;
    RecordBatchBuilder b(o);
    EXPECT_EQ(expect_same_decode(b.build()), Outcome::kDecoded);  // no records
    EXPECT_EQ(expect_same_decode(small_batch(codec)), Outcome::kDecoded);
    // Extreme timestamp deltas take all ten varlong bytes.
    b.append(0, as_bytes("k"), ByteView(long_value), many_headers);
    b.append(std::numeric_limits<std::int64_t>::max(), std::nullopt, as_bytes("v"));
    b.append(std::numeric_limits<std::int64_t>::min(), as_bytes("k"), std::nullopt);
    EXPECT_EQ(expect_same_decode(b.build()), Outcome::kDecoded);
  }
}

TEST(RecordFastPath, EverySingleByteChangeDecodesAlike) {
  const Bytes good = small_batch();
  int decoded = 0;
  int refused = 0;
  // The header too: a changed RecordsCount or codec reaches the records with
  // counts that do not match them.
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (int byte = 0; byte < 256; ++byte) {
      Bytes wire = good;
      wire[at] = static_cast<std::uint8_t>(byte);
      (expect_same_decode(wire) == Outcome::kDecoded ? decoded : refused)++;
      if (::testing::Test::HasFailure()) {
        FAIL() << "byte " << at << " set to " << byte;
      }
    }
  }
  // Both outcomes were exercised, many times.
  EXPECT_GT(decoded, 1000);
  EXPECT_GT(refused, 1000);
}

TEST(RecordFastPath, EveryTruncationAndCountDecodesAlike) {
  const Bytes good = small_batch();
  const ByteView section = ByteView(good).subspan(layout::kRecords);
  for (std::size_t n = 0; n <= section.size(); ++n) {
    for (std::int32_t count : {0, 1, 2, 3, 4}) {
      expect_same_decode(batch_with_section(section.first(n), count));
      expect_same_decode(batch_with_section(section.first(n), count, CompressionCodec::kLz4));
      if (::testing::Test::HasFailure()) FAIL() << n << " bytes, count " << count;
    }
  }
}

// Record bodies written by hand at the edges of the varint and length rules,
// each alone and followed by a good record.
TEST(RecordFastPath, HandWrittenRecordsDecodeAlike) {
  struct Case {
    const char* name;
    Bytes record;  // with its length varint
    Outcome outcome;
  };
  const Bytes good = with_length({0, 0, 0, 1, 1, 0});
  const Case cases[] = {
      {"minimal", good, Outcome::kDecoded},
      {"non-canonical key length 0x80 0x00", with_length({0, 0, 0, 0x80, 0x00, 1, 0}), Outcome::kDecoded},
      {"non-canonical record length", {0x8c, 0x00, 0, 0, 0, 1, 1, 0}, Outcome::kDecoded},
      {"five-byte timestamp delta 0", with_length({0, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 1, 1, 0}), Outcome::kDecoded},
      {"offset delta INT32_MIN in five bytes", with_length({0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1, 0}),
       Outcome::kDecoded},
      {"five-byte varint past 32 bits", with_length({0, 0, 0xff, 0xff, 0xff, 0xff, 0x1f, 1, 1, 0}), Outcome::kRefused},
      {"five-byte varint of exactly 2^32", with_length({0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 1, 0}),
       Outcome::kRefused},
      {"six-byte varint", with_length({0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1, 1, 0}), Outcome::kRefused},
      {"ten-byte varlong, top bits dropped",
       with_length({0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 1, 1, 0}), Outcome::kDecoded},
      {"ten-byte varlong of only a dropped bit",
       with_length({0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0, 1, 1, 0}), Outcome::kDecoded},
      {"eleven-byte varlong",
       with_length({0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 1, 1, 0}),
       Outcome::kRefused},
      {"varint cut by the record length", with_length({0, 0, 0x80}), Outcome::kRefused},
      {"record length -1", {0x01, 0, 0, 0, 1, 1, 0}, Outcome::kRefused},
      {"record length 0", {0x00, 0, 0, 0, 1, 1, 0}, Outcome::kRefused},
      {"record length past 32 bits", {0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 1, 1, 0}, Outcome::kRefused},
      {"key length -2", with_length({0, 0, 0, 0x03, 1, 0}), Outcome::kRefused},
      {"value length past the record", with_length({0, 0, 0, 1, 0x06, 'a', 0}), Outcome::kRefused},
      {"empty key and value", with_length({0, 0, 0, 0, 0, 0}), Outcome::kDecoded},
      {"header with a null value", with_length({0, 0, 0, 1, 1, 2, 2, 'h', 1}), Outcome::kDecoded},
      {"header with a null key", with_length({0, 0, 0, 1, 1, 2, 1, 2, 'v'}), Outcome::kRefused},
      {"second header with a null key", with_length({0, 0, 0, 1, 1, 4, 0, 0, 1, 1}), Outcome::kRefused},
      {"header key length -2", with_length({0, 0, 0, 1, 1, 2, 3, 0}), Outcome::kRefused},
      {"header count -1", with_length({0, 0, 0, 1, 1, 1}), Outcome::kRefused},
      {"header count past remaining / 2", with_length({0, 0, 0, 1, 1, 4, 0, 0, 0}), Outcome::kRefused},
      {"header key past the record", with_length({0, 0, 0, 1, 1, 2, 0x0a, 'h', 1}), Outcome::kRefused},
      {"spare byte in the record", with_length({0, 0, 0, 1, 1, 0, 0x7f}), Outcome::kRefused},
      {"attributes only", with_length({0}), Outcome::kRefused},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(expect_same_decode(batch_with_section(c.record, 1)), c.outcome);
    EXPECT_EQ(expect_same_decode(batch_with_section(concat(c.record, good), 2)), c.outcome);
    EXPECT_EQ(expect_same_decode(batch_with_section(concat(good, c.record), 2)), c.outcome);
    EXPECT_EQ(expect_same_decode(batch_with_section(concat(good, c.record), 2, CompressionCodec::kSnappy)), c.outcome);
  }
}

// The checked reader charges headers before reading them; a record the fast
// reader refuses halfway through its headers must not be charged twice.
TEST(RecordFastPath, BudgetChargedAlikeAtEveryCap) {
  const Bytes bad_second_header = with_length({0, 0, 0, 1, 1, 4, 0, 0, 1, 1});
  const Bytes bad = batch_with_section(concat(with_length({0, 0, 0, 1, 1, 2, 0, 0}), bad_second_header), 2);
  const Bytes good = small_batch();
  for (std::size_t cap = 0; cap <= 4 * sizeof(RecordView) + 4 * sizeof(RecordHeaderView); cap += 8) {
    expect_same_decode(bad, cap);
    expect_same_decode(good, cap);
    if (::testing::Test::HasFailure()) FAIL() << "cap " << cap;
  }
  EXPECT_EQ(expect_same_decode(good, 1 << 20), Outcome::kDecoded);
  EXPECT_EQ(expect_same_decode(bad, 1 << 20), Outcome::kRefused);
}

TEST(RecordFastPath, RandomCorruptionDecodesAlike) {
  std::mt19937 rng(17);
  const Bytes good = small_batch();
  const ByteView section = ByteView(good).subspan(layout::kRecords);
  for (int i = 0; i < 20000; ++i) {
    Bytes damaged(section.begin(), section.end());
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) {
      const std::uint8_t edge_bytes[] = {0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xff};
      damaged[rng() % damaged.size()] = rng() % 2 ? edge_bytes[rng() % 7] : static_cast<std::uint8_t>(rng());
    }
    const auto codec = rng() % 4 ? CompressionCodec::kNone : CompressionCodec::kZstd;
    const Bytes wire = batch_with_section(damaged, 3, codec);
    if (rng() % 2) {
      expect_same_decode(wire, rng() % 1024);
    } else {
      expect_same_decode(wire);
    }
    if (::testing::Test::HasFailure()) FAIL() << "iteration " << i;
  }
}

}  // namespace
}  // namespace pp
