// Issue 17: a Produce request encoded as a WireFrame is, byte for byte, the
// frame encode_request_frame builds; only payloads with an owner and at
// least kMinBorrowedPayloadBytes are borrowed instead of copied.
#include <gtest/gtest.h>

#include <memory>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {
namespace {

std::shared_ptr<Bytes> batch_of(std::size_t size, std::uint8_t seed) {
  auto bytes = std::make_shared<Bytes>(size);
  for (std::size_t i = 0; i < size; ++i) (*bytes)[i] = static_cast<std::uint8_t>(i + seed);
  return bytes;
}

ProduceRequest request_of(const std::vector<std::pair<std::shared_ptr<Bytes>, bool>>& batches) {
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 30000;
  request.topic_data.push_back(ProduceTopicData{"orders", {}, {}, {}});
  std::int32_t partition = 0;
  for (const auto& [bytes, owned] : batches) {
    RecordsView records{ByteView(*bytes), owned ? std::shared_ptr<const void>(bytes) : nullptr};
    request.topic_data[0].partition_data.push_back(ProducePartitionData{partition++, records, {}});
  }
  return request;
}

TEST(WireFrame, ProduceFrameMatchesTheCopiedFrameInEveryVersion) {
  const auto large = batch_of(kMinBorrowedPayloadBytes + 1000, 1);
  const auto small = batch_of(kMinBorrowedPayloadBytes - 1, 2);
  const auto unowned = batch_of(3 * kMinBorrowedPayloadBytes, 3);
  const auto exact = batch_of(kMinBorrowedPayloadBytes, 4);
  const ProduceRequest request = request_of({{large, true}, {small, true}, {unowned, false}, {exact, true}});
  for (std::int16_t version = 3; version <= 12; ++version) {
    const RequestHeader header{ApiKey::kProduce, version, 77, "produce-proxy", {}};
    const WireFrame frame = encode_request_wire_frame(header, request);
    const Bytes copied = encode_request_frame(header, request);
    ASSERT_EQ(frame.size(), copied.size()) << "v" << version;
    EXPECT_TRUE(bytes_equal(frame.flatten(), copied)) << "v" << version;
    ASSERT_EQ(frame.borrowed.size(), 2u) << "the large and the exact-size owned batches";
    EXPECT_EQ(frame.borrowed[0].bytes.data(), large->data()) << "borrowed where it lies";
    EXPECT_EQ(frame.borrowed[1].bytes.data(), exact->data());
    EXPECT_LT(frame.borrowed[0].at, frame.borrowed[1].at);
  }
}

TEST(WireFrame, RequestWithoutOwnersIsOneBuffer) {
  const auto batch = batch_of(64 * 1024, 5);
  const RequestHeader header{ApiKey::kProduce, 9, 1, std::nullopt, {}};
  const WireFrame frame = encode_request_wire_frame(header, request_of({{batch, false}}));
  EXPECT_TRUE(frame.borrowed.empty());
  EXPECT_TRUE(bytes_equal(frame.own, encode_request_frame(header, request_of({{batch, false}}))));
}

// A batch in pieces (values it borrows between bytes of its own): in the
// request its large pieces stay borrowed, the small ones between them are
// copied, and the batch's owner is held once, not per piece.
TEST(WireFrame, ABatchInPiecesKeepsItsLargePiecesBorrowed) {
  const auto value_a = batch_of(kMinBorrowedPieceBytes, 6);
  const auto value_b = batch_of(3 * kMinBorrowedPieceBytes, 7);
  auto batch = std::make_shared<WireFrame>(*batch_of(100, 8));
  batch->borrowed.push_back({61, ByteView(*value_a), value_a});
  batch->borrowed.push_back({70, ByteView(*value_b), value_b});
  ProduceRequest request = request_of({});
  request.topic_data[0].partition_data.push_back(ProducePartitionData{0, RecordsView{}, {}});
  request.topic_data[0].partition_data[0].records.pieces = batch.get();
  request.topic_data[0].partition_data[0].records.owner = batch;
  const RequestHeader header{ApiKey::kProduce, 9, 3, "produce-proxy", {}};
  const WireFrame frame = encode_request_wire_frame(header, request);
  ASSERT_EQ(frame.borrowed.size(), 2u) << "the two values; the batch's own bytes around them copied";
  EXPECT_EQ(frame.borrowed[0].bytes.data(), value_a->data());
  EXPECT_EQ(frame.borrowed[1].bytes.data(), value_b->data());
  EXPECT_EQ(frame.borrowed[0].owner, batch);
  EXPECT_EQ(frame.borrowed[1].owner, nullptr) << "the same owner, held once";
  ProduceRequest flat = request_of({});
  const Bytes flat_batch = batch->flatten();
  flat.topic_data[0].partition_data.push_back(ProducePartitionData{0, RecordsView{ByteView(flat_batch), nullptr}, {}});
  EXPECT_TRUE(bytes_equal(frame.flatten(), encode_request_frame(header, flat)));
}

TEST(WireFrame, PiecesSkipEmptyRangesAndKeepOrder) {
  const Bytes a{1, 2};
  const Bytes b{9};
  WireFrame frame(Bytes{10, 11, 12});
  frame.borrowed.push_back({0, ByteView(a), nullptr});
  frame.borrowed.push_back({3, ByteView(b), nullptr});
  std::vector<std::size_t> sizes;
  frame.for_each_piece([&](ByteView piece) { sizes.push_back(piece.size()); });
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 3, 1}));
  EXPECT_EQ(frame.flatten(), (Bytes{1, 2, 10, 11, 12, 9}));
  EXPECT_EQ(frame.size(), 6u);
}

}  // namespace
}  // namespace pp
