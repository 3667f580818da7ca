// Record values an uncompressed batch borrows instead of copying (issue 17:
// a legacy client's messages become v2 records around their values). The
// bytes on the wire must be exactly a copying builder's, whatever the mix
// of sizes, owners, headers and a client section in front.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/unit/records/test_util.h"

namespace pp {
namespace {

constexpr std::size_t kBorrowAt = RecordBatchBuilder::kMinBorrowedValueBytes;

struct Value {
  std::optional<std::string> bytes;  // nullopt: a null value
  int owner = 0;                     // which of the test's owners keeps it
};

RecordBatchBuildOptions options(CompressionCodec codec = CompressionCodec::kNone) {
  RecordBatchBuildOptions o;
  o.producer_id = 31;
  o.producer_epoch = 2;
  o.base_sequence = 400;
  o.compression = codec;
  return o;
}

const RecordHeaderView kHeader{as_bytes("trace"), as_bytes("t-1")};

// Appends `values` (every third with a header), borrowing from `owners`
// when `owners` is not empty.
void append_all(RecordBatchBuilder& b, const std::vector<Value>& values,
                const std::vector<std::shared_ptr<const void>>& owners) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& v = values[i];
    const std::optional<ByteView> value = v.bytes ? std::optional(as_bytes(*v.bytes)) : std::nullopt;
    const auto headers = i % 3 == 0 ? std::span(&kHeader, 1) : std::span<const RecordHeaderView>();
    const auto ts = 1'700'000'000'000 + static_cast<std::int64_t>(i % 7);
    if (owners.empty()) {
      b.append(ts, as_bytes("key-" + std::to_string(i)), value, headers);
    } else {
      b.append_borrowing_value(ts, as_bytes("key-" + std::to_string(i)), value, headers, owners[v.owner]);
    }
  }
}

std::vector<Value> mixed_values(std::uint32_t seed, std::size_t count) {
  std::mt19937 rng(seed);
  const std::vector<std::size_t> sizes = {0, 1, 100, kBorrowAt - 1, kBorrowAt, kBorrowAt + 1, 1024, 5000};
  std::vector<Value> out;
  for (std::size_t i = 0; i < count; ++i) {
    Value v;
    if (rng() % 9 != 0) v.bytes = std::string(sizes[rng() % sizes.size()], static_cast<char>('a' + i % 26));
    v.owner = static_cast<int>(rng() % 3 == 0);  // runs of one owner, then the other
    out.push_back(v);
  }
  return out;
}

std::size_t borrowable(const std::vector<Value>& values) {
  std::size_t n = 0;
  for (const auto& v : values) n += v.bytes && v.bytes->size() >= kBorrowAt ? 1 : 0;
  return n;
}

TEST(BorrowedValues, BuildTheSameBytesAsACopyingBuilder) {
  const std::vector<std::shared_ptr<const void>> owners = {std::make_shared<int>(0), std::make_shared<int>(1)};
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    const auto values = mixed_values(seed, 1 + seed % 23);
    RecordBatchBuilder copying(options());
    append_all(copying, values, {});
    const Bytes expected = copying.build();

    RecordBatchBuilder borrowing(options());
    append_all(borrowing, values, owners);
    const std::size_t announced = borrowing.size_bytes();
    const WireFrame built = borrowing.build_frame();
    EXPECT_EQ(built.size(), announced) << "seed " << seed;
    ASSERT_EQ(built.borrowed.size(), borrowable(values)) << "seed " << seed;
    EXPECT_EQ(built.flatten(), expected) << "seed " << seed;

    // Each slice is a value where it lies; an owner is held once per row.
    std::size_t slice = 0;
    const void* held = nullptr;
    for (const auto& v : values) {
      if (!v.bytes || v.bytes->size() < kBorrowAt) continue;
      const auto& b = built.borrowed[slice++];
      EXPECT_EQ(b.bytes.data(), as_bytes(*v.bytes).data());
      const void* owner = owners[v.owner].get();
      EXPECT_EQ(b.owner != nullptr, owner != held) << "seed " << seed << " slice " << slice;
      if (b.owner) {
        EXPECT_EQ(b.owner.get(), owner);
      }
      held = owner;
    }
    auto decoded = decode_record_batch(built.flatten());
    ASSERT_TRUE(decoded) << decoded.error().describe();
    EXPECT_EQ(decoded->records().size(), values.size());
  }
}

// The batch's CRC over a client section that is borrowed (joined from its
// known CRC) and over values borrowed after it.
TEST(BorrowedValues, FollowABorrowedClientSection) {
  RecordBatchBuilder client;
  for (int i = 0; i < 4; ++i) client.append(1'700'000'000'000 + i, as_bytes("c"), as_bytes(std::string(300, 'c')));
  const Bytes wire = client.build();
  auto section = decode_record_batch(wire);
  ASSERT_TRUE(section);
  const auto values = mixed_values(7, 12);
  const auto build = [&](bool borrow) {
    RecordBatchBuilder b(options());
    b.append_encoded(section->records_bytes(), 4, section->header().base_timestamp, section->header().max_timestamp,
                     section->records_crc(), borrow ? std::make_shared<int>(0) : nullptr);
    append_all(b, values,
               borrow ? std::vector<std::shared_ptr<const void>>{std::make_shared<int>(1), std::make_shared<int>(2)}
                      : std::vector<std::shared_ptr<const void>>{});
    return b.build_frame();
  };
  const WireFrame copied = build(false);
  const WireFrame borrowed = build(true);
  ASSERT_TRUE(copied.borrowed.empty());
  ASSERT_EQ(borrowed.borrowed.size(), 1 + borrowable(values));
  EXPECT_EQ(borrowed.flatten(), copied.own);
}

TEST(BorrowedValues, ACompressedBatchCopiesThem) {
  const auto values = mixed_values(3, 10);
  ASSERT_GT(borrowable(values), 0u);
  const std::vector<std::shared_ptr<const void>> owners = {std::make_shared<int>(0), std::make_shared<int>(1)};
  RecordBatchBuilder borrowing(options(CompressionCodec::kLz4));
  append_all(borrowing, values, owners);
  const WireFrame built = borrowing.build_frame();
  EXPECT_TRUE(built.borrowed.empty());
  auto decoded = decode_record_batch(built.own);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  ASSERT_EQ(decoded->records().size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& got = decoded->records()[i].value;
    ASSERT_EQ(got.has_value(), values[i].bytes.has_value());
    if (got) {
      EXPECT_EQ(test::str(*got), *values[i].bytes);
    }
  }
}

// An epoch bump re-stamps the header and recomputes the CRC over every
// piece; the borrowed values stay as they are.
TEST(BorrowedValues, PatchingProducerStateMatchesTheFlatBatch) {
  const auto values = mixed_values(11, 15);
  RecordBatchBuilder builder(options());
  append_all(builder, values, {std::make_shared<int>(0), std::make_shared<int>(1)});
  WireFrame borrowed = builder.build_frame();
  ASSERT_FALSE(borrowed.borrowed.empty());
  Bytes flat = borrowed.flatten();
  patch_producer_state(borrowed, 99, 4, 7000);
  patch_producer_state(std::span<std::uint8_t>(flat), 99, 4, 7000);
  EXPECT_EQ(borrowed.flatten(), flat);
  auto decoded = decode_record_batch(flat);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->header().base_sequence, 7000);
}

}  // namespace
}  // namespace pp
