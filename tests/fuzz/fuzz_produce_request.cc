// A client's Produce request frame (header + body, as the front end gets it
// from FrameReader) through the Produce-to-runs conversion: record sets of
// every format and codec are peer bytes. Checks that every record view a run
// hands the pipeline lies inside the bytes the run keeps alive, so a bug
// there shows up here rather than as a use-after-free in the daemon.
// v13 names topics by id: ids whose first byte is even name "fuzz-topic",
// the others are unknown, and every entry must come out named by its id or
// refused.
#include "proxy/frontend/produce_conversion.h"
#include "proxy/protocol/header.h"

namespace {

volatile std::uint32_t g_checksum;  // keeps the reads from being optimised away

void touch(const std::optional<pp::ByteView>& v, std::uint32_t& sum) {
  // Reading every byte lets ASan see a view that points anywhere freed.
  if (!v) return;
  for (std::uint8_t b : *v) sum += b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto frame = std::make_shared<const pp::Bytes>(data, data + size);
  pp::WireReader r(*frame);
  auto header = pp::decode_request_header(r);
  if (!header || header->header.api_key != pp::ApiKey::kProduce) return 0;
  const std::int16_t version = header->header.api_version;
  if (version < 0 || version > pp::kProduceTopicIdVersion) return 0;
  auto request = pp::decode_body<pp::ProduceRequest>(r, version);
  if (!request) return 0;
  const bool by_id = version >= pp::kProduceTopicIdVersion;
  pp::name_topics_by_id(*request, version, [](const pp::Uuid& id) -> std::optional<std::string> {
    if (id.is_zero() || id.bytes[0] % 2 != 0) return std::nullopt;
    return "fuzz-topic";
  });

  pp::ProduceConversionOptions options;
  options.max_decompressed_bytes = 4 * 1024 * 1024;
  options.max_decoded_bytes = 1024 * 1024;
  pp::ProduceConversion converted = pp::convert_produce_request(*request, version, frame, options);
  // Only the runs may keep the bytes alive from here on.
  *request = pp::ProduceRequest{};
  frame.reset();

  std::uint32_t sum = 0;
  std::size_t records = 0;
  for (const pp::PartitionProduce& p : converted.partitions) {
    if (p.error != pp::ErrorCode::kNone && !p.run.records.empty()) __builtin_trap();
    // An unnamed entry is refused (UNKNOWN_TOPIC_ID, or what refuses the
    // whole request first); a named one has the name its id resolved to.
    if (by_id && p.topic.empty() && p.error == pp::ErrorCode::kNone) __builtin_trap();
    if (by_id && p.error == pp::ErrorCode::kUnknownTopicId && !p.topic.empty()) __builtin_trap();
    if (by_id && !p.topic.empty() && p.topic != "fuzz-topic") __builtin_trap();
    if (!p.run.records.empty() && !p.run.storage) __builtin_trap();
    records += p.run.records.size();
    for (const pp::RunRecord& rec : p.run.records) {
      touch(rec.key, sum);
      touch(rec.value, sum);
      for (const auto& h : rec.headers) {
        touch(pp::ByteView(h.key), sum);
        touch(h.value, sum);
      }
    }
  }
  if (records != converted.records) __builtin_trap();
  if (converted.decoded_bytes > options.max_decoded_bytes) __builtin_trap();
  g_checksum = sum;
  return 0;
}
