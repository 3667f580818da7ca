// Reading RecordBatch v2. Rules follow DefaultRecordBatch / DefaultRecord
// .readFrom; every length is checked against the bytes present before use.
#include <algorithm>
#include <string>

#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_fast_path.h"

namespace pp {
namespace {

namespace layout = record_batch_layout;

// The smallest record: length, attributes, timestamp delta, offset delta, key
// length, value length and header count, one byte each.
constexpr std::size_t kMinRecordSize = 7;
// The smallest header: key length and value length, one byte each.
constexpr std::size_t kMinHeaderSize = 2;

std::unexpected<DecodeError> fail_at(DecodeErrorKind kind, std::size_t offset, std::string field) {
  return std::unexpected(DecodeError{kind, offset, std::move(field)});
}

template <class T>
std::unexpected<DecodeError> named(Decoded<T>&& failed, std::string_view field) {
  DecodeError e = std::move(failed).error();
  e.within(field);
  return std::unexpected(std::move(e));
}

// A nullable varint-length byte field (DefaultRecord key/value, header value):
// -1 is null, anything below is corrupt.
Decoded<std::optional<ByteView>> read_nullable_bytes(WireReader& r, std::string_view field) {
  const std::size_t at = r.offset();
  auto length = r.read_varint();
  if (!length) return named(std::move(length), field);
  if (*length == -1) return std::optional<ByteView>{};
  if (*length < -1) return fail_at(DecodeErrorKind::kNegativeLength, at, std::string(field));
  auto bytes = r.read_span(static_cast<std::size_t>(*length));
  if (!bytes) return fail_at(DecodeErrorKind::kLengthTooLarge, at, std::string(field));
  return std::optional<ByteView>{*bytes};
}

// Charges n items of `each` bytes to the budget, if there is one.
bool charge(DecodeBudget* budget, std::size_t n, std::size_t each) {
  return !budget || budget->take(n, each);
}

Decoded<void> read_headers(WireReader& r, RecordView& record, DecodeBudget* budget) {
  const std::size_t at = r.offset();
  auto count = r.read_varint();
  if (!count) return named(std::move(count), "header_count");
  if (*count < 0) return fail_at(DecodeErrorKind::kNegativeLength, at, "header_count");
  if (static_cast<std::size_t>(*count) > r.remaining() / kMinHeaderSize) {
    return fail_at(DecodeErrorKind::kLengthTooLarge, at, "header_count");
  }
  // 2 bytes on the wire, 40 in memory: charged before the reserve.
  if (!charge(budget, static_cast<std::size_t>(*count), sizeof(RecordHeaderView))) {
    return fail_at(DecodeErrorKind::kOverBudget, at, "header_count");
  }
  record.headers.reserve(static_cast<std::size_t>(*count));
  for (std::int32_t i = 0; i < *count; ++i) {
    // Field names are built only on the error path.
    const auto within_header = [i](DecodeError e) {
      e.within("[" + std::to_string(i) + "]").within("headers");
      return std::unexpected(std::move(e));
    };
    // Header keys are never null ("Invalid negative header key size").
    const std::size_t key_at = r.offset();
    auto key = read_nullable_bytes(r, "key");
    if (!key) return within_header(std::move(key).error());
    if (!key->has_value()) return within_header(DecodeError{DecodeErrorKind::kNegativeLength, key_at, "key"});
    auto value = read_nullable_bytes(r, "value");
    if (!value) return within_header(std::move(value).error());
    record.headers.push_back(RecordHeaderView{**key, *value});
  }
  return {};
}

// One DefaultRecord at the cursor of `section`.
Decoded<RecordView> read_record(WireReader& section, DecodeBudget* budget) {
  const std::size_t at = section.offset();
  auto length = section.read_varint();
  if (!length) return named(std::move(length), "length");
  if (*length < 0) return fail_at(DecodeErrorKind::kNegativeLength, at, "length");
  const std::size_t body_at = section.offset();
  auto body = section.read_span(static_cast<std::size_t>(*length));
  if (!body) return fail_at(DecodeErrorKind::kLengthTooLarge, at, "length");

  WireReader r(*body, body_at);
  RecordView record;
  auto attributes = r.read_int8();
  if (!attributes) return named(std::move(attributes), "attributes");
  record.attributes = *attributes;
  auto timestamp_delta = r.read_varlong();
  if (!timestamp_delta) return named(std::move(timestamp_delta), "timestamp_delta");
  record.timestamp_delta = *timestamp_delta;
  auto offset_delta = r.read_varint();
  if (!offset_delta) return named(std::move(offset_delta), "offset_delta");
  record.offset_delta = *offset_delta;
  auto key = read_nullable_bytes(r, "key");
  if (!key) return std::unexpected(std::move(key).error());
  record.key = *key;
  auto value = read_nullable_bytes(r, "value");
  if (!value) return std::unexpected(std::move(value).error());
  record.value = *value;
  if (auto headers = read_headers(r, record, budget); !headers) return std::unexpected(headers.error());
  // The fields must fill Length exactly ("Invalid record size: expected to read
  // N bytes in record payload").
  if (!r.empty()) return fail_at(DecodeErrorKind::kTrailingBytes, r.offset(), "length");
  return record;
}

Decoded<void> read_records(ByteView section, std::size_t base, std::int32_t count, std::string_view field,
                           std::vector<RecordView>& out, DecodeBudget* budget, bool fast_records) {
  // Check the declared count against the bytes present before reserving.
  if (static_cast<std::size_t>(count) > section.size() / kMinRecordSize) {
    return fail_at(DecodeErrorKind::kLengthTooLarge, layout::kRecordsCount, "records_count");
  }
  if (!charge(budget, static_cast<std::size_t>(count), sizeof(RecordView))) {
    return fail_at(DecodeErrorKind::kOverBudget, layout::kRecordsCount, "records_count");
  }
  out.reserve(static_cast<std::size_t>(count));
  const std::uint8_t* const section_end = section.data() + section.size();
  std::size_t position = 0;
  for (std::int32_t i = 0; i < count; ++i) {
    if (fast_records) {
      if (const std::uint8_t* next = detail::read_record_fast(section.data() + position, section_end, out, budget)) {
        position = static_cast<std::size_t>(next - section.data());
        continue;
      }
    }
    // Refused by the fast reader, or it is off: the checked reader decides,
    // from the record's first byte, and names any error.
    WireReader r(section.subspan(position), base + position);
    auto record = read_record(r, budget);
    if (!record) {
      DecodeError e = std::move(record).error();
      e.within("[" + std::to_string(i) + "]").within(field);
      return std::unexpected(std::move(e));
    }
    out.push_back(std::move(*record));
    position += r.position();
  }
  // "Incorrect declared batch size, records still remaining in file".
  if (position != section.size()) {
    return fail_at(DecodeErrorKind::kTrailingBytes, base + position, std::string(field));
  }
  return {};
}

}  // namespace

Decoded<RecordBatchHeader> decode_record_batch_header(ByteView batch) {
  if (batch.size() < layout::kHeaderSize) {
    return fail_at(DecodeErrorKind::kTruncated, batch.size(), "header");
  }
  WireReader r(batch);
  RecordBatchHeader h;
  // Every read below is within the 61 bytes just checked.
  h.base_offset = *r.read_int64();
  h.batch_length = *r.read_int32();
  h.partition_leader_epoch = *r.read_int32();
  h.magic = *r.read_int8();
  h.crc = *r.read_uint32();
  h.attributes = *r.read_int16();
  h.last_offset_delta = *r.read_int32();
  h.base_timestamp = *r.read_int64();
  h.max_timestamp = *r.read_int64();
  h.producer_id = *r.read_int64();
  h.producer_epoch = *r.read_int16();
  h.base_sequence = *r.read_int32();
  h.records_count = *r.read_int32();
  // The magic decides how to read everything after Length, so it goes first.
  if (h.magic != kRecordBatchMagic) return fail_at(DecodeErrorKind::kUnsupported, layout::kMagic, "magic");
  if (h.batch_length < 0) return fail_at(DecodeErrorKind::kNegativeLength, layout::kLength, "length");
  if (static_cast<std::size_t>(h.batch_length) < layout::kHeaderSize - layout::kLogOverhead) {
    return fail_at(DecodeErrorKind::kInvalidValue, layout::kLength, "length");
  }
  return h;
}

Decoded<RecordBatchView> decode_record_batch(ByteView batch, const RecordBatchReadOptions& options) {
  auto header = decode_record_batch_header(batch);
  if (!header) return std::unexpected(std::move(header).error());
  const std::size_t total = header->total_size();
  if (total > batch.size()) return fail_at(DecodeErrorKind::kTruncated, batch.size(), "records");
  if (total < batch.size()) return fail_at(DecodeErrorKind::kTrailingBytes, total, "<after batch>");
  if (options.verify_crc) {
    const std::uint32_t computed = crc32c(batch.subspan(layout::kAttributes));
    if (computed != header->crc) return fail_at(DecodeErrorKind::kBadChecksum, layout::kCrc, "crc");
  }
  const auto codec = header->compression();
  if (!codec) return fail_at(DecodeErrorKind::kUnsupported, layout::kAttributes, "attributes.compression");
  if (header->records_count < 0) {
    return fail_at(DecodeErrorKind::kNegativeLength, layout::kRecordsCount, "records_count");
  }

  RecordBatchView view;
  view.header_ = *header;
  view.wire_ = batch;
  view.crc_checked_ = options.verify_crc;
  const ByteView section = batch.subspan(layout::kRecords);
  if (*codec == CompressionCodec::kNone) {
    if (auto ok = read_records(section, layout::kRecords, header->records_count, "records", view.records_,
                               options.budget, options.fast_records);
        !ok) {
      return std::unexpected(ok.error());
    }
    return view;
  }
  // The smaller of the two caps bounds the inflation itself; hitting the
  // budget's is reported as kOverBudget.
  const bool budget_limits = options.budget && options.budget->left() < options.max_decompressed_bytes;
  auto plain = decompress(*codec, section, budget_limits ? options.budget->left() : options.max_decompressed_bytes);
  if (!plain) {
    DecodeError e = std::move(plain).error();
    if (budget_limits && e.kind == DecodeErrorKind::kTooLarge) e.kind = DecodeErrorKind::kOverBudget;
    e.offset += layout::kRecords;
    e.within("records");
    return std::unexpected(std::move(e));
  }
  (void)charge(options.budget, plain->size(), 1);  // fits: it was the cap
  view.decompressed_ = std::move(*plain);
  if (auto ok = read_records(view.decompressed_, 0, header->records_count, "decompressed_records", view.records_,
                             options.budget, options.fast_records);
      !ok) {
    return std::unexpected(ok.error());
  }
  return view;
}

Decoded<RecordBatchSplit> split_record_batches(ByteView records) {
  // Smallest entry: a magic-0 message (Records.LOG_OVERHEAD + LegacyRecord
  // .RECORD_OVERHEAD_V0); a v2 batch needs its whole 61-byte header.
  constexpr std::size_t kMinLegacyEntry = 14;
  RecordBatchSplit split;
  WireReader r(records);
  while (!r.empty()) {
    const std::size_t at = r.offset();
    const auto field = [&split] { return "batches[" + std::to_string(split.batches.size()) + "]"; };
    if (r.remaining() < layout::kLogOverhead) {
      split.partial = r.rest();
      split.partial_offset = at;
      break;
    }
    (void)*r.read_int64();
    const std::int32_t length = *r.read_int32();
    if (length < 0) return fail_at(DecodeErrorKind::kNegativeLength, at + layout::kLength, field() + ".length");
    if (static_cast<std::size_t>(length) < kMinLegacyEntry) {
      return fail_at(DecodeErrorKind::kInvalidValue, at + layout::kLength, field() + ".length");
    }
    if (r.remaining() > layout::kMagic - layout::kLogOverhead) {
      const std::int8_t magic = static_cast<std::int8_t>(records[at + layout::kMagic]);
      if (magic < 0 || magic > kRecordBatchMagic) {
        return fail_at(DecodeErrorKind::kUnsupported, at + layout::kMagic, field() + ".magic");
      }
      if (magic == kRecordBatchMagic && static_cast<std::size_t>(length) < layout::kHeaderSize - layout::kLogOverhead) {
        return fail_at(DecodeErrorKind::kInvalidValue, at + layout::kLength, field() + ".length");
      }
    }
    if (static_cast<std::size_t>(length) > r.remaining()) {
      split.partial = records.subspan(at);
      split.partial_offset = at;
      break;
    }
    split.batches.push_back(records.subspan(at, layout::kLogOverhead + static_cast<std::size_t>(length)));
    (void)r.skip(static_cast<std::size_t>(length));
  }
  return split;
}

std::optional<std::uint32_t> RecordBatchView::records_crc() const {
  if (!crc_checked_ || header_.compression().value_or(CompressionCodec::kNone) != CompressionCodec::kNone) {
    return std::nullopt;
  }
  // The batch's CRC covers Attributes through the last record.
  const ByteView before_records = wire_.subspan(layout::kAttributes, layout::kRecords - layout::kAttributes);
  return crc32c_combine(crc32c(before_records), header_.crc, wire_.size() - layout::kRecords);
}

}  // namespace pp
