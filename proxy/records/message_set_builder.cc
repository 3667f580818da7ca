#include "proxy/records/message_set_builder.h"

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32.h"

namespace pp {
namespace {

namespace layout = legacy_layout;

std::int8_t timestamp_bit(const MessageSetBuildOptions& o) {
  return (o.magic == 1 && o.timestamp_type == TimestampType::kLogAppendTime) ? legacy_attributes::kTimestampType : 0;
}

void put_nullable(WireWriter& w, std::optional<ByteView> bytes) {
  if (!bytes) {
    w.int32(-1);
    return;
  }
  w.int32(static_cast<std::int32_t>(bytes->size()));
  w.raw(*bytes);
}

}  // namespace

void append_legacy_message(Bytes& out, std::int64_t offset, std::int8_t magic, std::int8_t attributes,
                           std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value) {
  const std::size_t start = out.size();
  WireWriter w(out);
  w.int64(offset);
  const std::size_t size_at = w.reserve_int32();
  const std::size_t crc_at = w.reserve_int32();
  w.int8(magic);
  w.int8(attributes);
  if (magic == 1) w.int64(timestamp);
  put_nullable(w, key);
  put_nullable(w, value);
  w.patch_int32(size_at, static_cast<std::int32_t>(out.size() - start - layout::kLogOverhead));
  const ByteView covered(out.data() + crc_at + 4, out.size() - crc_at - 4);
  w.patch_uint32(crc_at, crc32_ieee(covered));
}

MessageSetBuilder::MessageSetBuilder(const MessageSetBuildOptions& options) : options_(options) {}

void MessageSetBuilder::append(std::int64_t offset, std::int64_t timestamp, std::optional<ByteView> key,
                               std::optional<ByteView> value) {
  append_legacy_message(messages_, offset, options_.magic, timestamp_bit(options_), timestamp, key, value);
  if (count_ == 0 || timestamp > max_timestamp_) max_timestamp_ = timestamp;
  last_offset_ = offset;
  next_offset_ = wrapping_add(offset, 1);
  ++count_;
}

Bytes MessageSetBuilder::build(std::optional<std::int64_t> wrapper_offset) const {
  if (options_.compression == CompressionCodec::kNone) return messages_;
  const Lz4Framing framing =
      options_.lz4_framing.value_or(options_.magic == 0 ? Lz4Framing::kKafkaLegacy : Lz4Framing::kStandard);
  const Bytes compressed = compress(options_.compression, messages_, CompressOptions{std::nullopt, framing});
  const auto attributes = static_cast<std::int8_t>(static_cast<int>(options_.compression) | timestamp_bit(options_));
  Bytes out;
  append_legacy_message(out, wrapper_offset.value_or(last_offset_), options_.magic, attributes, max_timestamp_,
                        std::nullopt, ByteView(compressed));
  return out;
}

}  // namespace pp
