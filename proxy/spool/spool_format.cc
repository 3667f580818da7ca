#include "proxy/spool/spool_format.h"

#include <algorithm>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch.h"

namespace pp::spool {
namespace {

// Kafka's topic names are at most 249 bytes (Topic.MAX_NAME_LENGTH).
constexpr std::size_t kMaxTopicBytes = 249;

std::unexpected<DecodeError> fail(DecodeErrorKind kind, std::size_t offset, std::string_view field) {
  return std::unexpected(DecodeError{kind, offset, std::string(field)});
}

void put_string(WireWriter& w, const std::string& s) {
  w.uint16(static_cast<std::uint16_t>(s.size()));
  w.raw(std::string_view(s));
}

Decoded<std::string> read_topic(WireReader& r) {
  const std::size_t at = r.offset();
  auto len = r.read_uint16();
  if (!len) return std::unexpected(len.error());
  if (*len == 0 || *len > kMaxTopicBytes) return fail(DecodeErrorKind::kInvalidValue, at, "topic");
  auto bytes = r.read_span(*len);
  if (!bytes) return std::unexpected(bytes.error());
  return std::string(bytes->begin(), bytes->end());
}

void encode_body(const RecordsEntry& e, WireWriter& w) {
  put_string(w, e.topic);
  w.int32(e.partition);
  w.int16(e.acks);
  w.int64(e.client_producer_id);
  w.int16(e.client_producer_epoch);
  w.int32(e.client_base_sequence);
  w.int32(e.record_count);
  w.uint32(static_cast<std::uint32_t>(e.batch.size()));
  w.raw(e.batch);
}

void encode_body(const IdentityEntry& e, WireWriter& w) {
  w.int64(e.producer_id);
  w.int16(e.producer_epoch);
}

void encode_body(const SequencedEntry& e, WireWriter& w) {
  put_string(w, e.topic);
  w.int32(e.partition);
  w.int64(e.producer_id);
  w.int16(e.producer_epoch);
  w.int32(e.base_sequence);
  w.int32(e.record_count);
  w.int64(static_cast<std::int64_t>(e.supersedes));
  w.uint16(static_cast<std::uint16_t>(e.ranges.size()));
  for (const RecordRange& r : e.ranges) {
    w.int64(static_cast<std::int64_t>(r.records));
    w.int32(r.first_record);
    w.int32(r.record_count);
  }
}

void encode_body(const ResolvedEntry& e, WireWriter& w) {
  w.int64(static_cast<std::int64_t>(e.target));
  w.int8(static_cast<std::int8_t>(e.outcome));
  w.int16(e.error_code);
  w.int64(e.base_offset);
}

void encode_body(const ClusterViewEntry& e, WireWriter& w) {
  w.uint32(static_cast<std::uint32_t>(e.topics.size()));
  for (const TopicPartitions& t : e.topics) {
    put_string(w, t.topic);
    w.int32(t.partitions);
  }
}

void encode_body(const ClientProducersEntry& e, WireWriter& w) {
  w.int64(e.next_producer_id);
  w.uint32(static_cast<std::uint32_t>(e.producers.size()));
  for (const ClientProducerSnapshot& p : e.producers) {
    w.int64(p.producer_id);
    w.int16(p.epoch);
    w.int8(p.bumped_by_request ? 1 : 0);
    w.uint32(static_cast<std::uint32_t>(p.partitions.size()));
    for (const ClientPartitionSnapshot& t : p.partitions) {
      put_string(w, t.topic);
      w.int32(t.partition);
      w.int16(t.epoch);
      w.int32(t.last_sequence);
      w.uint16(static_cast<std::uint16_t>(t.batches.size()));
      for (const ClientBatchSnapshot& b : t.batches) {
        w.int16(b.epoch);
        w.int32(b.first_sequence);
        w.int32(b.last_sequence);
        w.int8(static_cast<std::int8_t>(b.state));
        w.int16(b.error_code);
        w.int64(b.base_offset);
        w.int64(b.log_append_time_ms);
        w.int64(b.log_start_offset);
      }
    }
  }
}

EntryKind kind_of(const EntryBody& body) {
  return static_cast<EntryKind>(body.index() + 1);
}

// A records entry's batch must be one whole RecordBatch v2 holding exactly
// the records the entry says: a replay delivers nothing else.
Decoded<RecordsEntry> decode_records(WireReader& r) {
  RecordsEntry e;
  auto topic = read_topic(r);
  if (!topic) return std::unexpected(topic.error());
  e.topic = std::move(*topic);
  auto partition = r.read_int32();
  auto acks = partition ? r.read_int16() : std::unexpected(partition.error());
  auto pid = acks ? r.read_int64() : std::unexpected(acks.error());
  auto epoch = pid ? r.read_int16() : std::unexpected(pid.error());
  auto seq = epoch ? r.read_int32() : std::unexpected(epoch.error());
  auto count = seq ? r.read_int32() : std::unexpected(seq.error());
  auto len = count ? r.read_uint32() : std::unexpected(count.error());
  if (!len) return std::unexpected(len.error());
  const std::size_t at = r.offset();
  auto batch = r.read_span(*len);
  if (!batch) return std::unexpected(batch.error());
  if (*partition < 0) return fail(DecodeErrorKind::kInvalidValue, at, "partition");
  if (*acks < -1 || *acks > 1) return fail(DecodeErrorKind::kInvalidValue, at, "acks");
  if (*count <= 0) return fail(DecodeErrorKind::kInvalidValue, at, "record_count");
  auto header = decode_record_batch_header(*batch);
  if (!header) return std::unexpected(header.error().within("batch"));
  if (header->total_size() != batch->size()) return fail(DecodeErrorKind::kInvalidValue, at, "batch.length");
  if (header->records_count != *count) return fail(DecodeErrorKind::kInvalidValue, at, "batch.records_count");
  e.partition = *partition;
  e.acks = *acks;
  e.client_producer_id = *pid;
  e.client_producer_epoch = *epoch;
  e.client_base_sequence = *seq;
  e.record_count = *count;
  e.batch = *batch;
  return e;
}

Decoded<IdentityEntry> decode_identity(WireReader& r) {
  const std::size_t at = r.offset();
  auto pid = r.read_int64();
  auto epoch = pid ? r.read_int16() : std::unexpected(pid.error());
  if (!epoch) return std::unexpected(epoch.error());
  if (*pid < 0 || *epoch < 0) return fail(DecodeErrorKind::kInvalidValue, at, "identity");
  return IdentityEntry{*pid, *epoch};
}

Decoded<std::vector<RecordRange>> decode_ranges(WireReader& r, EntryId self, std::int32_t record_count) {
  const std::size_t at = r.offset();
  auto n = r.read_uint16();
  if (!n) return std::unexpected(n.error());
  constexpr std::size_t kRangeBytes = 16;
  if (*n == 0 || *n * kRangeBytes > r.remaining()) return fail(DecodeErrorKind::kLengthTooLarge, at, "ranges");
  std::vector<RecordRange> ranges;
  ranges.reserve(*n);
  std::int64_t total = 0;
  for (std::uint16_t i = 0; i < *n; ++i) {
    // Within the bytes checked above.
    const auto id = static_cast<EntryId>(*r.read_int64());
    const std::int32_t first = *r.read_int32();
    const std::int32_t count = *r.read_int32();
    if (id == kNoEntry || id >= self || first < 0 || count <= 0) {
      return fail(DecodeErrorKind::kInvalidValue, at, "ranges");
    }
    total += count;
    ranges.push_back(RecordRange{id, first, count});
  }
  if (total != record_count) return fail(DecodeErrorKind::kInvalidValue, at, "ranges.record_count");
  return ranges;
}

Decoded<SequencedEntry> decode_sequenced(WireReader& r, EntryId self) {
  SequencedEntry e;
  auto topic = read_topic(r);
  if (!topic) return std::unexpected(topic.error());
  e.topic = std::move(*topic);
  const std::size_t at = r.offset();
  auto partition = r.read_int32();
  auto pid = partition ? r.read_int64() : std::unexpected(partition.error());
  auto epoch = pid ? r.read_int16() : std::unexpected(pid.error());
  auto base = epoch ? r.read_int32() : std::unexpected(epoch.error());
  auto count = base ? r.read_int32() : std::unexpected(base.error());
  auto supersedes = count ? r.read_int64() : std::unexpected(count.error());
  if (!supersedes) return std::unexpected(supersedes.error());
  if (*partition < 0 || *pid < 0 || *epoch < 0 || *base < 0 || *count <= 0) {
    return fail(DecodeErrorKind::kInvalidValue, at, "batch");
  }
  if (static_cast<EntryId>(*supersedes) >= self) return fail(DecodeErrorKind::kInvalidValue, at, "supersedes");
  auto ranges = decode_ranges(r, self, *count);
  if (!ranges) return std::unexpected(ranges.error());
  e.partition = *partition;
  e.producer_id = *pid;
  e.producer_epoch = *epoch;
  e.base_sequence = *base;
  e.record_count = *count;
  e.supersedes = static_cast<EntryId>(*supersedes);
  e.ranges = std::move(*ranges);
  return e;
}

Decoded<ResolvedEntry> decode_resolved(WireReader& r, EntryId self) {
  const std::size_t at = r.offset();
  auto target = r.read_int64();
  auto outcome = target ? r.read_int8() : std::unexpected(target.error());
  auto error = outcome ? r.read_int16() : std::unexpected(outcome.error());
  auto offset = error ? r.read_int64() : std::unexpected(error.error());
  if (!offset) return std::unexpected(offset.error());
  const auto id = static_cast<EntryId>(*target);
  if (id == kNoEntry || id >= self) return fail(DecodeErrorKind::kInvalidValue, at, "target");
  if (*outcome < 1 || *outcome > 3) return fail(DecodeErrorKind::kInvalidValue, at, "outcome");
  return ResolvedEntry{id, static_cast<Outcome>(*outcome), *error, *offset};
}

Decoded<ClusterViewEntry> decode_cluster_view(WireReader& r) {
  const std::size_t at = r.offset();
  auto n = r.read_uint32();
  if (!n) return std::unexpected(n.error());
  // The smallest topic is 2 + 1 + 4 bytes.
  if (*n > r.remaining() / 7) return fail(DecodeErrorKind::kLengthTooLarge, at, "topics");
  ClusterViewEntry e;
  e.topics.reserve(*n);
  for (std::uint32_t i = 0; i < *n; ++i) {
    auto topic = read_topic(r);
    if (!topic) return std::unexpected(topic.error());
    auto partitions = r.read_int32();
    if (!partitions) return std::unexpected(partitions.error());
    if (*partitions <= 0) return fail(DecodeErrorKind::kInvalidValue, at, "topics.partitions");
    e.topics.push_back(TopicPartitions{std::move(*topic), *partitions});
  }
  return e;
}

// Bytes of the smallest producer (id, epoch, flags, partition count), the
// smallest partition (a 1-byte topic and its fields) and of one batch: what
// bounds a count against the bytes left before anything is reserved.
constexpr std::size_t kMinClientProducerBytes = 15;
constexpr std::size_t kMinClientPartitionBytes = 15;
constexpr std::size_t kClientBatchBytes = 37;

Decoded<ClientBatchSnapshot> decode_client_batch(WireReader& r) {
  const std::size_t at = r.offset();
  if (r.remaining() < kClientBatchBytes) return fail(DecodeErrorKind::kTruncated, at, "batches");
  // Within the bytes checked above.
  ClientBatchSnapshot b;
  b.epoch = *r.read_int16();
  b.first_sequence = *r.read_int32();
  b.last_sequence = *r.read_int32();
  const std::int8_t state = *r.read_int8();
  b.error_code = *r.read_int16();
  b.base_offset = *r.read_int64();
  b.log_append_time_ms = *r.read_int64();
  b.log_start_offset = *r.read_int64();
  if (b.epoch < 0 || b.first_sequence < 0 || b.last_sequence < 0 || state < 1 || state > 4) {
    return fail(DecodeErrorKind::kInvalidValue, at, "batches");
  }
  b.state = static_cast<ClientBatchState>(state);
  return b;
}

Decoded<ClientPartitionSnapshot> decode_client_partition(WireReader& r) {
  ClientPartitionSnapshot t;
  auto topic = read_topic(r);
  if (!topic) return std::unexpected(topic.error());
  t.topic = std::move(*topic);
  const std::size_t at = r.offset();
  auto partition = r.read_int32();
  auto epoch = partition ? r.read_int16() : std::unexpected(partition.error());
  auto last = epoch ? r.read_int32() : std::unexpected(epoch.error());
  auto n = last ? r.read_uint16() : std::unexpected(last.error());
  if (!n) return std::unexpected(n.error());
  if (*partition < 0 || *epoch < 0 || *last < -1) return fail(DecodeErrorKind::kInvalidValue, at, "partition");
  if (*n > r.remaining() / kClientBatchBytes) return fail(DecodeErrorKind::kLengthTooLarge, at, "batches");
  t.partition = *partition;
  t.epoch = *epoch;
  t.last_sequence = *last;
  t.batches.reserve(*n);
  for (std::uint16_t i = 0; i < *n; ++i) {
    auto b = decode_client_batch(r);
    if (!b) return std::unexpected(b.error());
    t.batches.push_back(*b);
  }
  return t;
}

Decoded<ClientProducerSnapshot> decode_client_producer(WireReader& r) {
  const std::size_t at = r.offset();
  auto pid = r.read_int64();
  auto epoch = pid ? r.read_int16() : std::unexpected(pid.error());
  auto flags = epoch ? r.read_int8() : std::unexpected(epoch.error());
  auto n = flags ? r.read_uint32() : std::unexpected(flags.error());
  if (!n) return std::unexpected(n.error());
  if (*pid < 0 || *epoch < 0 || (*flags != 0 && *flags != 1))
    return fail(DecodeErrorKind::kInvalidValue, at, "producer");
  if (*n > r.remaining() / kMinClientPartitionBytes) return fail(DecodeErrorKind::kLengthTooLarge, at, "partitions");
  ClientProducerSnapshot p{*pid, *epoch, *flags == 1, {}};
  p.partitions.reserve(*n);
  for (std::uint32_t i = 0; i < *n; ++i) {
    auto t = decode_client_partition(r);
    if (!t) return std::unexpected(t.error());
    p.partitions.push_back(std::move(*t));
  }
  return p;
}

Decoded<ClientProducersEntry> decode_client_producers(WireReader& r) {
  const std::size_t at = r.offset();
  auto next = r.read_int64();
  auto n = next ? r.read_uint32() : std::unexpected(next.error());
  if (!n) return std::unexpected(n.error());
  if (*next < 0) return fail(DecodeErrorKind::kInvalidValue, at, "next_producer_id");
  if (*n > r.remaining() / kMinClientProducerBytes) return fail(DecodeErrorKind::kLengthTooLarge, at, "producers");
  ClientProducersEntry e;
  e.next_producer_id = *next;
  e.producers.reserve(*n);
  for (std::uint32_t i = 0; i < *n; ++i) {
    auto p = decode_client_producer(r);
    if (!p) return std::unexpected(p.error());
    e.producers.push_back(std::move(*p));
  }
  return e;
}

template <class T>
Decoded<EntryBody> as_body(Decoded<T> v) {
  if (!v) return std::unexpected(std::move(v).error());
  return EntryBody(std::move(*v));
}

Decoded<EntryBody> decode_body(EntryKind kind, WireReader& r, EntryId self) {
  switch (kind) {
    case EntryKind::kRecords:
      return as_body(decode_records(r));
    case EntryKind::kIdentity:
      return as_body(decode_identity(r));
    case EntryKind::kSequenced:
      return as_body(decode_sequenced(r, self));
    case EntryKind::kResolved:
      return as_body(decode_resolved(r, self));
    case EntryKind::kClusterView:
      return as_body(decode_cluster_view(r));
    case EntryKind::kClientProducers:
      return as_body(decode_client_producers(r));
  }
  return fail(DecodeErrorKind::kUnsupported, r.offset(), "kind");
}

}  // namespace

void encode_segment_header(const SegmentHeader& header, Bytes& out) {
  const std::size_t start = out.size();
  WireWriter w(out);
  w.raw(kSegmentMagic);
  w.uint32(header.version);
  w.uint32(static_cast<std::uint32_t>(kSegmentHeaderBytes));
  w.int64(static_cast<std::int64_t>(header.segment_id));
  w.int64(header.created_ms);
  w.uint32(crc32c(ByteView(out).subspan(start, kSegmentHeaderBytes - 4)));
}

std::string_view to_string(HeaderProblem problem) {
  switch (problem) {
    case HeaderProblem::kTruncated:
      return "truncated header";
    case HeaderProblem::kBadMagic:
      return "not a spool segment (bad magic)";
    case HeaderProblem::kNewerVersion:
      return "written by a newer format version";
    case HeaderProblem::kBadVersion:
      return "invalid format version";
    case HeaderProblem::kBadChecksum:
      return "header checksum mismatch";
  }
  return "unknown";
}

namespace {

// A header whose version is above kFormatVersion: refused as newer only when
// it verifies as every version's header does (the size @12, a CRC-32C of the
// bytes before it at its end, SPOOL.md "On-disk format"); otherwise its
// version field is damage like any other, so a flipped bit there does not
// refuse the whole directory. A newer header torn before its end holds no
// entry: truncated.
HeaderProblem newer_header_problem(ByteView bytes) {
  constexpr std::size_t kSizeField = kSegmentMagic.size() + 4;
  constexpr std::size_t kMaxNewerHeaderBytes = 4096;
  if (bytes.size() < kSizeField + 4) return HeaderProblem::kTruncated;
  WireReader r(bytes.subspan(kSizeField));
  const std::uint32_t size = *r.read_uint32();
  if (size < kSizeField + 8 || size > kMaxNewerHeaderBytes) return HeaderProblem::kBadChecksum;
  if (bytes.size() < size) return HeaderProblem::kTruncated;
  WireReader crc_field(bytes.subspan(size - 4));
  const std::uint32_t crc = *crc_field.read_uint32();
  return crc == crc32c(bytes.first(size - 4)) ? HeaderProblem::kNewerVersion : HeaderProblem::kBadChecksum;
}

}  // namespace

HeaderResult decode_segment_header(ByteView bytes) {
  HeaderResult result;
  if (bytes.size() < kSegmentMagic.size() + 4) {
    result.problem = HeaderProblem::kTruncated;
    return result;
  }
  if (!std::equal(kSegmentMagic.begin(), kSegmentMagic.end(), bytes.begin())) {
    result.problem = HeaderProblem::kBadMagic;
    return result;
  }
  WireReader r(bytes.subspan(kSegmentMagic.size()));
  result.header.version = *r.read_uint32();
  if (result.header.version > kFormatVersion) {
    result.problem = newer_header_problem(bytes);
  } else if (result.header.version == 0) {
    result.problem = HeaderProblem::kBadVersion;
  } else if (bytes.size() < kSegmentHeaderBytes) {
    result.problem = HeaderProblem::kTruncated;
  } else {
    const std::uint32_t size = *r.read_uint32();
    result.header.segment_id = static_cast<std::uint64_t>(*r.read_int64());
    result.header.created_ms = *r.read_int64();
    const std::uint32_t crc = *r.read_uint32();
    if (size != kSegmentHeaderBytes || crc != crc32c(bytes.first(kSegmentHeaderBytes - 4))) {
      result.problem = HeaderProblem::kBadChecksum;
    }
  }
  return result;
}

std::size_t encoded_size(const EntryBody& body) {
  Bytes scratch;
  // Records entries dominate and are sized without copying their batch.
  if (const auto* records = std::get_if<RecordsEntry>(&body)) {
    RecordsEntry empty = *records;
    empty.batch = {};
    WireWriter w(scratch);
    encode_body(empty, w);
    return kEntryHeaderBytes + scratch.size() + records->batch.size();
  }
  WireWriter w(scratch);
  std::visit([&](const auto& b) { encode_body(b, w); }, body);
  return kEntryHeaderBytes + scratch.size();
}

std::size_t encode_entry_unsealed(const Entry& entry, Bytes& out) {
  const std::size_t start = out.size();
  WireWriter w(out);
  w.uint32(0);  // size, patched below
  w.uint32(0);  // CRC, left to seal_entry
  w.int8(static_cast<std::int8_t>(kind_of(entry.body)));
  w.int64(static_cast<std::int64_t>(entry.id));
  w.int64(entry.time_ms);
  std::visit([&](const auto& b) { encode_body(b, w); }, entry.body);
  const std::size_t payload = out.size() - start - kEntryFrameBytes;
  WireWriter::put_be(out.data() + start, static_cast<std::uint32_t>(payload));
  return out.size() - start;
}

void seal_entry(std::uint8_t* entry, std::size_t size) {
  const std::uint32_t crc = crc32c(ByteView(entry + kEntryFrameBytes, size - kEntryFrameBytes));
  WireWriter::put_be(entry + 4, crc);
}

std::size_t encode_entry(const Entry& entry, Bytes& out) {
  const std::size_t start = out.size();
  const std::size_t size = encode_entry_unsealed(entry, out);
  seal_entry(out.data() + start, size);
  return size;
}

Decoded<Entry> decode_entry_payload(ByteView payload) {
  WireReader r(payload);
  auto kind = r.read_int8();
  auto id = kind ? r.read_int64() : std::unexpected(kind.error());
  auto time = id ? r.read_int64() : std::unexpected(id.error());
  if (!time) return std::unexpected(time.error());
  if (*kind < 1 || *kind > kLastEntryKind) return fail(DecodeErrorKind::kUnsupported, 0, "kind");
  if (*id <= 0) return fail(DecodeErrorKind::kInvalidValue, 1, "id");
  Entry entry;
  entry.id = static_cast<EntryId>(*id);
  entry.time_ms = *time;
  auto body = decode_body(static_cast<EntryKind>(*kind), r, entry.id);
  if (!body) return std::unexpected(std::move(body).error());
  if (!r.empty()) return fail(DecodeErrorKind::kTrailingBytes, r.offset(), "body");
  entry.body = std::move(*body);
  return entry;
}

std::string_view to_string(EntryKind kind) {
  switch (kind) {
    case EntryKind::kRecords:
      return "records";
    case EntryKind::kIdentity:
      return "identity";
    case EntryKind::kSequenced:
      return "sequenced";
    case EntryKind::kResolved:
      return "resolved";
    case EntryKind::kClusterView:
      return "cluster_view";
    case EntryKind::kClientProducers:
      return "client_producers";
  }
  return "unknown";
}

}  // namespace pp::spool
