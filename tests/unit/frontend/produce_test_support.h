// Building Produce requests the way old and new clients do, for the front
// end's tests: legacy MessageSets (MessageSetBuilder) for v0-2, RecordBatch
// v2 (RecordBatchBuilder) for v3+.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/records/message_set_builder.h"
#include "proxy/records/record_batch_builder.h"

namespace pp::test {

struct ProduceEntry {
  std::string topic;
  std::int32_t partition = 0;
  Bytes records;
};

struct TestRecord {
  std::string key;
  std::string value;
  std::int64_t timestamp = 1'700'000'000'000;
};

inline std::vector<TestRecord> numbered_records(int n, const std::string& prefix = "r") {
  std::vector<TestRecord> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(
        {prefix + "-key-" + std::to_string(i), prefix + "-value-" + std::to_string(i), 1'700'000'000'000 + i});
  }
  return out;
}

inline Bytes legacy_set(std::int8_t magic, CompressionCodec codec, const std::vector<TestRecord>& records) {
  MessageSetBuildOptions o;
  o.magic = magic;
  o.compression = codec;
  MessageSetBuilder b(o);
  for (const auto& r : records) b.append(r.timestamp, as_bytes(r.key), as_bytes(r.value));
  return b.build();
}

inline Bytes record_batch(CompressionCodec codec, const std::vector<TestRecord>& records,
                          const RecordBatchBuildOptions& base = {}, std::span<const RecordHeaderView> headers = {}) {
  RecordBatchBuildOptions o = base;
  o.compression = codec;
  RecordBatchBuilder b(o);
  for (const auto& r : records) b.append(r.timestamp, as_bytes(r.key), as_bytes(r.value), headers);
  return b.build();
}

inline ProduceRequest produce_body(std::int16_t acks, const std::vector<ProduceEntry>& entries,
                                   std::optional<std::string> transactional_id = std::nullopt) {
  ProduceRequest r;
  r.acks = acks;
  r.timeout_ms = 30000;
  r.transactional_id = std::move(transactional_id);
  for (const auto& e : entries) {
    if (r.topic_data.empty() || r.topic_data.back().name != e.topic) r.topic_data.emplace_back().name = e.topic;
    ProducePartitionData& p = r.topic_data.back().partition_data.emplace_back();
    p.index = e.partition;
    p.records.data = ByteView(e.records);
  }
  return r;
}

// The whole request frame with its size prefix, as a client writes it.
inline Bytes produce_frame(std::int16_t version, std::int32_t correlation_id, std::int16_t acks,
                           const std::vector<ProduceEntry>& entries,
                           std::optional<std::string> transactional_id = std::nullopt) {
  RequestHeader h;
  h.api_key = ApiKey::kProduce;
  h.api_version = version;
  h.correlation_id = correlation_id;
  h.client_id = "test-producer";
  return encode_request_frame(h, produce_body(acks, entries, std::move(transactional_id)));
}

// A Produce v2 frame (with its size prefix) of roughly `bytes` in 1000-byte
// records to orders-`partition`, acks=1: memory tests size frames with it.
inline Bytes produce_of_size(std::int32_t correlation_id, std::size_t bytes, std::int32_t partition = 0) {
  std::vector<TestRecord> records;
  for (std::size_t i = 0; i * 1000 < bytes; ++i) records.push_back({"k", std::string(1000, 'v')});
  return produce_frame(2, correlation_id, 1, {{"orders", partition, legacy_set(1, CompressionCodec::kNone, records)}});
}

// A Produce v7 frame of a few KiB whose one record carries `headers` empty
// headers in a gzip batch: about 40 bytes of memory per header once decoded.
inline Bytes inflating_produce(std::int32_t correlation_id, std::size_t headers, std::int32_t partition) {
  const std::vector<RecordHeaderView> views(headers, RecordHeaderView{ByteView{}, ByteView{}});
  return produce_frame(
      7, correlation_id, 1,
      {{"orders", partition, record_batch(CompressionCodec::kGzip, {{"k", "v", 1'700'000'000'000}}, {}, views)}});
}

// A request decoded from its own frame, as the front end sees it.
struct DecodedProduce {
  std::shared_ptr<const Bytes> frame;
  ProduceRequest request;
};

inline DecodedProduce decoded_produce(std::int16_t version, std::int16_t acks, const std::vector<ProduceEntry>& entries,
                                      std::optional<std::string> transactional_id = std::nullopt) {
  Bytes whole = produce_frame(version, 1, acks, entries, std::move(transactional_id));
  DecodedProduce out;
  out.frame = std::make_shared<const Bytes>(whole.begin() + 4, whole.end());
  WireReader r(*out.frame);
  auto h = decode_request_header(r);
  auto body = decode_body<ProduceRequest>(r, version);
  if (h && body) out.request = std::move(*body);
  return out;
}

}  // namespace pp::test
