#include "proxy/records/record_batch_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/varint.h"

namespace pp {
namespace {

namespace layout = record_batch_layout;
namespace attrs = record_batch_attributes;
using detail::put_varint;
using detail::put_varlong;
using detail::varint_size;
using detail::varlong_size;

// Kafka's DefaultRecord.MAX_RECORD_OVERHEAD: length (5) + attributes (1) +
// timestamp delta (10) + offset delta (5).
constexpr std::size_t kMaxRecordOverhead = 21;

[[noreturn]] void invariant_failure(const char* what) {
  std::fprintf(stderr, "produce-proxy: record batch invariant broken: %s\n", what);
  std::abort();
}

std::size_t nullable_size(std::optional<ByteView> bytes) {
  if (!bytes) return 1;  // varint(-1)
  return varint_size(static_cast<std::int32_t>(bytes->size())) + bytes->size();
}

std::size_t nullable_size(std::optional<std::size_t> size) {
  if (!size) return 1;
  return varint_size(static_cast<std::int32_t>(*size)) + *size;
}

// A nullable byte field: varint length (-1 for null), then the bytes.
std::uint8_t* put_nullable(std::uint8_t* p, std::optional<ByteView> bytes) {
  p = put_varint(p, bytes ? static_cast<std::int32_t>(bytes->size()) : -1);
  if (bytes && !bytes->empty()) {
    std::memcpy(p, bytes->data(), bytes->size());
    p += bytes->size();
  }
  return p;
}

std::size_t headers_size(std::span<const RecordHeaderView> headers) {
  std::size_t n = varint_size(static_cast<std::int32_t>(headers.size()));
  for (const RecordHeaderView& h : headers) {
    n += nullable_size(std::optional<ByteView>(h.key)) + nullable_size(h.value);
  }
  return n;
}

std::int16_t attributes_of(const RecordBatchBuildOptions& o) {
  auto a = static_cast<std::int16_t>(static_cast<int>(o.compression) & attrs::kCodecMask);
  if (o.timestamp_type == TimestampType::kLogAppendTime) a |= attrs::kTimestampType;
  if (o.transactional) a |= attrs::kTransactional;
  if (o.control) a |= attrs::kControl;
  return a;
}

}  // namespace

RecordBatchBuilder::RecordBatchBuilder(const RecordBatchBuildOptions& options, std::size_t expected_bytes)
    : options_(options), expected_bytes_(expected_bytes) {
  frame_.own.reserve(std::max(expected_bytes, layout::kHeaderSize));
  frame_.own.resize(layout::kHeaderSize);
}

std::size_t RecordBatchBuilder::record_body_size(std::int64_t timestamp_delta, std::int32_t offset_delta,
                                                 std::optional<ByteView> key, std::optional<ByteView> value,
                                                 std::span<const RecordHeaderView> headers) const {
  return 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + nullable_size(key) + nullable_size(value) +
         headers_size(headers);
}

std::size_t RecordBatchBuilder::size_bytes_with(std::int64_t timestamp, std::optional<ByteView> key,
                                                std::optional<ByteView> value,
                                                std::span<const RecordHeaderView> headers) const {
  const std::int64_t delta = count_ == 0 ? 0 : wrapping_sub(timestamp, base_timestamp_);
  const std::size_t body = record_body_size(delta, count_, key, value, headers);
  return size_bytes() + varint_size(static_cast<std::int32_t>(body)) + body;
}

std::size_t RecordBatchBuilder::record_size_upper_bound(std::optional<std::size_t> key_size,
                                                        std::optional<std::size_t> value_size,
                                                        std::span<const RecordHeaderView> headers) {
  return kMaxRecordOverhead + nullable_size(key_size) + nullable_size(value_size) + headers_size(headers);
}

void RecordBatchBuilder::append(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value,
                                std::span<const RecordHeaderView> headers) {
  append_record(timestamp, key, value, headers, nullptr);
}

void RecordBatchBuilder::append_borrowing_value(std::int64_t timestamp, std::optional<ByteView> key,
                                                std::optional<ByteView> value,
                                                std::span<const RecordHeaderView> headers,
                                                const std::shared_ptr<const void>& owner) {
  const bool borrows = owner && borrows_value(options_.compression, value);
  append_record(timestamp, key, value, headers, borrows ? &owner : nullptr);
}

void RecordBatchBuilder::append_record(std::int64_t timestamp, std::optional<ByteView> key,
                                       std::optional<ByteView> value, std::span<const RecordHeaderView> headers,
                                       const std::shared_ptr<const void>* value_owner) {
  if (count_ == 0) {
    base_timestamp_ = timestamp;
    max_timestamp_ = timestamp;
    if (frame_.own.capacity() < expected_bytes_) frame_.own.reserve(expected_bytes_);
  }
  max_timestamp_ = std::max(max_timestamp_, timestamp);
  const std::int64_t timestamp_delta = wrapping_sub(timestamp, base_timestamp_);
  const std::size_t body = record_body_size(timestamp_delta, count_, key, value, headers);
  if (body > static_cast<std::size_t>(INT32_MAX) ||
      size_bytes() + body + 5 - layout::kLogOverhead > static_cast<std::size_t>(INT32_MAX)) {
    invariant_failure("batch over 2 GiB (the caller must stop at batch_bytes)");
  }
  const std::size_t record_size = varint_size(static_cast<std::int32_t>(body)) + body;
  const std::size_t own_size = record_size - (value_owner != nullptr ? value->size() : 0);

  // The record's size is known, so the buffer grows once and every field is
  // written in place: one resize (its zero-fill of a record is a short
  // memset) instead of an insert per field, each with its own capacity check
  // and copy call (docs/BENCHMARKS.md, instructions per record).
  if (frame_.own.capacity() < frame_.own.size() + own_size) {
    frame_.own.reserve(std::max(frame_.own.size() + own_size, 2 * frame_.own.size()));
  }
  const std::size_t at = frame_.own.size();
  frame_.own.resize(at + own_size);
  std::uint8_t* p = put_varint(frame_.own.data() + at, static_cast<std::int32_t>(body));
  *p++ = 0;  // attributes: unused
  p = put_varlong(p, timestamp_delta);
  p = put_varint(p, count_);
  p = put_nullable(p, key);
  if (value_owner != nullptr) {
    p = put_varint(p, static_cast<std::int32_t>(value->size()));
    // A batch of borrowed values holds at most one slice per value that
    // fits the batch expected: sized once instead of doubling per value.
    if (frame_.borrowed.capacity() == 0) {
      frame_.borrowed.reserve(std::min<std::size_t>(expected_bytes_ / kMinBorrowedValueBytes + 1, 256));
    }
    frame_.borrow(static_cast<std::size_t>(p - frame_.own.data()), *value, *value_owner);
    borrowed_bytes_ += value->size();
  } else {
    p = put_nullable(p, value);
  }
  p = put_varint(p, static_cast<std::int32_t>(headers.size()));
  for (const RecordHeaderView& h : headers) {
    p = put_nullable(p, h.key);
    p = put_nullable(p, h.value);
  }
  if (p != frame_.own.data() + frame_.own.size()) invariant_failure("record written at another size than computed");
  ++count_;
}

void RecordBatchBuilder::append_encoded(ByteView records, std::int32_t count, std::int64_t base_timestamp,
                                        std::int64_t max_timestamp, std::optional<std::uint32_t> records_crc,
                                        const std::shared_ptr<const void>& owner) {
  if (count_ != 0) invariant_failure("encoded records appended to a batch that has records");
  if (count <= 0) invariant_failure("encoded records without a record count");
  if (frame_.own.size() + records.size() - layout::kLogOverhead > static_cast<std::size_t>(INT32_MAX)) {
    invariant_failure("batch over 2 GiB (the caller must stop at batch_bytes)");
  }
  if (owner && options_.compression == CompressionCodec::kNone) {
    frame_.borrow(layout::kHeaderSize, records, owner);
    borrowed_bytes_ += records.size();
  } else {
    frame_.own.insert(frame_.own.end(), records.begin(), records.end());
  }
  known_crc_ = records_crc;
  known_crc_bytes_ = records.size();
  count_ = count;
  base_timestamp_ = base_timestamp;
  max_timestamp_ = max_timestamp;
}

void RecordBatchBuilder::write_header(std::uint8_t* out, std::size_t total_size, bool records_as_appended) const {
  const auto put = [out](std::size_t at, auto v) { WireWriter::put_be(out + at, v); };
  put(layout::kBaseOffset, options_.base_offset);
  put(layout::kLength, static_cast<std::int32_t>(total_size - layout::kLogOverhead));
  put(layout::kPartitionLeaderEpoch, options_.partition_leader_epoch);
  out[layout::kMagic] = static_cast<std::uint8_t>(kRecordBatchMagic);
  put(layout::kAttributes, attributes_of(options_));
  // An empty batch has no last record: Kafka would never send one; we write -1.
  put(layout::kLastOffsetDelta, static_cast<std::int32_t>(count_ - 1));
  put(layout::kBaseTimestamp, base_timestamp_);
  put(layout::kMaxTimestamp, max_timestamp_);
  put(layout::kProducerId, options_.producer_id);
  put(layout::kProducerEpoch, options_.producer_epoch);
  put(layout::kBaseSequence, options_.base_sequence);
  put(layout::kRecordsCount, count_);
  // Attributes through RecordsCount, then the records: a CRC known for their
  // first bytes (the encoded section, copied or borrowed) is joined on, and
  // only the bytes after them are read.
  std::uint32_t crc = crc32c(ByteView(out + layout::kAttributes, layout::kRecords - layout::kAttributes));
  const std::size_t own_size = total_size - borrowed_bytes_;
  const auto& borrowed = frame_.borrowed;
  std::size_t from = layout::kRecords;  // in `out`: own bytes not read yet
  std::size_t next_slice = 0;
  if (records_as_appended && known_crc_ && known_crc_bytes_ >= kKnownCrcMinBytes) {
    crc = crc32c_combine(crc, *known_crc_, known_crc_bytes_);
    // A borrowed section is the only slice right after the header (a
    // record's value comes after its own length).
    if (!borrowed.empty() && borrowed.front().at == layout::kHeaderSize) {
      next_slice = 1;
    } else {
      from += known_crc_bytes_;
    }
  }
  for (; next_slice < borrowed.size(); ++next_slice) {
    const WireFrame::Borrowed& slice = borrowed[next_slice];
    crc = crc32c(ByteView(out + from, slice.at - from), crc);
    crc = crc32c(slice.bytes, crc);
    from = slice.at;
  }
  crc = crc32c(ByteView(out + from, own_size - from), crc);
  put(layout::kCrc, crc);
}

WireFrame RecordBatchBuilder::build_frame() {
  WireFrame out;
  if (options_.compression == CompressionCodec::kNone) {
    write_header(frame_.own.data(), size_bytes(), true);
    out = std::move(frame_);
    frame_ = WireFrame();  // a next batch reserves at its first append: one-shot builders never pay for it
  } else {
    out.own = build();
    return out;
  }
  reset();
  return out;
}

Bytes RecordBatchBuilder::build() {
  if (!frame_.borrowed.empty()) {
    WireFrame pieces = build_frame();
    return pieces.flatten();
  }
  Bytes out;
  if (options_.compression == CompressionCodec::kNone) {
    write_header(frame_.own.data(), frame_.own.size(), true);
    out = std::move(frame_.own);
    frame_.own = Bytes();  // a next batch reserves at its first append: one-shot builders never pay for it
  } else {
    // The records section is compressed as one stream; the header and
    // RecordsCount stay uncompressed.
    const ByteView records(frame_.own.data() + layout::kHeaderSize, frame_.own.size() - layout::kHeaderSize);
    out.reserve(layout::kHeaderSize + records.size() / 2 + 64);
    out.resize(layout::kHeaderSize);
    compress_append(options_.compression, records, out,
                    CompressOptions{options_.compression_level, Lz4Framing::kStandard});
    if (out.size() - layout::kLogOverhead > static_cast<std::size_t>(INT32_MAX)) {
      invariant_failure("compressed batch over 2 GiB");
    }
    write_header(out.data(), out.size(), false);
  }
  reset();
  return out;
}

void RecordBatchBuilder::reset() {
  frame_.own.resize(layout::kHeaderSize);
  frame_.borrowed.clear();
  frame_.owner_slice = 0;
  borrowed_bytes_ = 0;
  known_crc_.reset();
  known_crc_bytes_ = 0;
  count_ = 0;
  base_timestamp_ = -1;
  max_timestamp_ = -1;
}

void patch_producer_state(std::span<std::uint8_t> batch, std::int64_t producer_id, std::int16_t producer_epoch,
                          std::int32_t base_sequence) {
  if (batch.size() < layout::kHeaderSize) invariant_failure("patch_producer_state on a short batch");
  WireWriter::put_be(batch.data() + layout::kProducerId, producer_id);
  WireWriter::put_be(batch.data() + layout::kProducerEpoch, producer_epoch);
  WireWriter::put_be(batch.data() + layout::kBaseSequence, base_sequence);
  const std::uint32_t crc = crc32c(ByteView(batch.data() + layout::kAttributes, batch.size() - layout::kAttributes));
  WireWriter::put_be(batch.data() + layout::kCrc, crc);
}

void patch_producer_state(WireFrame& batch, std::int64_t producer_id, std::int16_t producer_epoch,
                          std::int32_t base_sequence) {
  if (batch.borrowed.empty()) {
    patch_producer_state(std::span<std::uint8_t>(batch.own), producer_id, producer_epoch, base_sequence);
    return;
  }
  if (batch.own.size() < layout::kHeaderSize || batch.borrowed.front().at < layout::kHeaderSize) {
    invariant_failure("patch_producer_state on a batch whose header is not its own");
  }
  std::uint8_t* header = batch.own.data();
  WireWriter::put_be(header + layout::kProducerId, producer_id);
  WireWriter::put_be(header + layout::kProducerEpoch, producer_epoch);
  WireWriter::put_be(header + layout::kBaseSequence, base_sequence);
  std::uint32_t crc = 0;
  std::size_t at = 0;
  batch.for_each_piece([&](ByteView piece) {
    const std::size_t skip = at < layout::kAttributes ? std::min(piece.size(), layout::kAttributes - at) : 0;
    crc = crc32c(piece.subspan(skip), crc);
    at += piece.size();
  });
  WireWriter::put_be(header + layout::kCrc, crc);
}

}  // namespace pp
