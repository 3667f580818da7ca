#include "proxy/frontend/produce_conversion.h"

#include <algorithm>
#include <optional>

#include "proxy/records/message_set.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {
namespace {

// Keeps alive everything a run's views point into: the client's frame (plain
// records) and the decoded sets (their decompressed buffers).
struct RunStorage {
  std::shared_ptr<const void> frame;
  std::vector<RecordBatchView> batches;
  std::optional<MessageSetView> message_set;
};

struct EntryError {
  ErrorCode error;
  std::string message;
  bool over_decoded_bytes = false;  // the request's DecodeBudget ran out
};

EntryError from_decode_error(const DecodeError& e, const DecodeBudget& decoded) {
  std::string message = "records: " + e.describe();
  switch (e.kind) {
    case DecodeErrorKind::kTooLarge:
      return {ErrorCode::kMessageTooLarge, std::move(message)};
    case DecodeErrorKind::kOverBudget:
      return {ErrorCode::kMessageTooLarge, message + " (" + std::to_string(decoded.cap()) + " bytes)", true};
    case DecodeErrorKind::kUnsupported:
      if (e.field.find("compression") != std::string::npos) {
        return {ErrorCode::kUnsupportedCompressionType, std::move(message)};
      }
      if (e.field.find("magic") != std::string::npos) return {ErrorCode::kInvalidRecord, std::move(message)};
      return {ErrorCode::kCorruptMessage, std::move(message)};
    default:
      return {ErrorCode::kCorruptMessage, std::move(message)};
  }
}

std::size_t decompressed_size(const RecordBatchView& batch) {
  // Records of a compressed batch point into its own buffer; the sum of their
  // payloads is a lower bound of that buffer, close enough for accounting.
  if (batch.header().compression().value_or(CompressionCodec::kNone) == CompressionCodec::kNone) return 0;
  std::size_t n = 0;
  for (const auto& r : batch.records()) {
    n += (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0) + 8;
    for (const auto& h : r.headers) n += h.key.size() + (h.value ? h.value->size() : 0);
  }
  return n;
}

// What the broker would refuse for one record, checked before batching so it
// fails this entry alone, not an upstream batch shared with other clients.
// Kafka's LogValidator.validateTimestamp for CreateTime; a missing timestamp
// (-1) is stamped with the receive time later (PIPELINE.md, decisions: a
// record without a timestamp gets the receive time).
// What each record of one entry is checked against.
struct RecordChecks {
  const ProduceConversionOptions& options;
  std::size_t topic_batch_limit = 0;  // 0: unknown
  // The upstream batch bytes of the records checked so far, at most: each
  // record's bound is computed once, for its check and for these sums.
  std::size_t batch_bytes_bound = 0;
  // Of those, what is copied into the batch (values it borrows are not).
  std::size_t batch_copy_bound = 0;
};

std::optional<EntryError> check_timestamp(const ProduceConversionOptions& o, std::size_t index,
                                          std::int64_t timestamp) {
  if (timestamp < 0) return std::nullopt;
  const bool ahead = o.timestamp_after_max_ms >= 0 && timestamp - o.now_ms > o.timestamp_after_max_ms;
  const bool behind = o.timestamp_before_max_ms >= 0 && o.now_ms - timestamp > o.timestamp_before_max_ms;
  if (!ahead && !behind) return std::nullopt;
  return EntryError{ErrorCode::kInvalidTimestamp,
                    "Timestamp " + std::to_string(timestamp) + " of record " + std::to_string(index) +
                        " is out of range: more than " +
                        std::to_string(ahead ? o.timestamp_after_max_ms : o.timestamp_before_max_ms) + " ms " +
                        (ahead ? "ahead of" : "behind") + " the proxy's clock (" + std::to_string(o.now_ms) + ")"};
}

// The record alone in a batch as the pipeline would write it: exact, and
// compressed when the pipeline compresses. Only asked for a record whose
// upper bound is over its topic's limit, so the compression is rare.
std::size_t batch_size_alone(CompressionCodec codec, std::int64_t timestamp, const std::optional<ByteView>& key,
                             const std::optional<ByteView>& value, std::span<const RecordHeaderView> headers) {
  RecordBatchBuildOptions options;
  options.compression = codec;
  RecordBatchBuilder builder(options);
  if (codec == CompressionCodec::kNone) return builder.size_bytes_with(timestamp, key, value, headers);
  builder.append(timestamp, key, value, headers);
  return builder.build().size();
}

std::optional<EntryError> check_record(RecordChecks& checks, std::size_t index, std::int64_t timestamp,
                                       const std::optional<ByteView>& key, const std::optional<ByteView>& value,
                                       std::span<const RecordHeaderView> headers) {
  const ProduceConversionOptions& o = checks.options;
  if (auto error = check_timestamp(o, index, timestamp)) return error;
  const std::size_t bound = RecordBatchBuilder::record_size_upper_bound(
      key ? std::optional<std::size_t>(key->size()) : std::nullopt,
      value ? std::optional<std::size_t>(value->size()) : std::nullopt, headers);
  checks.batch_bytes_bound += bound;
  checks.batch_copy_bound += bound - (RecordBatchBuilder::borrows_value(o.compression, value) ? value->size() : 0);
  if (o.max_record_batch_bytes == 0 && checks.topic_batch_limit == 0) return std::nullopt;
  const std::size_t alone = record_batch_layout::kHeaderSize + bound;
  if (o.max_record_batch_bytes > 0 && alone > o.max_record_batch_bytes) {
    return EntryError{ErrorCode::kMessageTooLarge, "record " + std::to_string(index) + " needs a batch of " +
                                                       std::to_string(alone) + " bytes; the upstream limit is " +
                                                       std::to_string(o.max_record_batch_bytes)};
  }
  if (checks.topic_batch_limit == 0 || alone <= checks.topic_batch_limit) return std::nullopt;
  const std::size_t written =
      batch_size_alone(o.compression, std::max<std::int64_t>(timestamp, 0), key, value, headers);
  if (written <= checks.topic_batch_limit) return std::nullopt;
  return EntryError{ErrorCode::kMessageTooLarge,
                    "record " + std::to_string(index) + " needs a batch of " + std::to_string(written) + " bytes" +
                        (o.compression == CompressionCodec::kNone ? "" : " compressed") +
                        "; the topic's max.message.bytes upstream is " + std::to_string(checks.topic_batch_limit)};
}

EntryError over_budget(const DecodeBudget& decoded) {
  return {ErrorCode::kMessageTooLarge,
          "records: decoded size over the per-request memory cap (" + std::to_string(decoded.cap()) + " bytes)", true};
}

// The upstream batch bytes the run's records will be copied into, at most
// (summed by the checks), taken from the request's decode budget now: the
// client's frame stays held beside that batch until it is acknowledged.
std::optional<EntryError> reserve_batch_copy(RecordRun& run, DecodeBudget& decoded, const RecordChecks& checks) {
  if (!decoded.take(checks.batch_copy_bound)) return over_budget(decoded);
  run.upstream_bytes_bound = checks.batch_bytes_bound;
  run.batch_bytes_reserved = checks.batch_copy_bound;
  return std::nullopt;
}

// The batch's records section, when an upstream batch can carry it byte for
// byte: the proxy writes a header of its own (producer state, codec), so the
// records must not depend on the client's: CreateTime with every timestamp
// known (a missing one is stamped later, by the pipeline) and offset deltas
// 0..n-1 (what the broker checks, and what a fresh batch's numbering is).
std::optional<EncodedRecords> encoded_as_is(const RecordBatchView& batch) {
  const RecordBatchHeader& h = batch.header();
  const auto records = batch.records();
  if (records.empty() || h.timestamp_type() != TimestampType::kCreateTime || h.base_timestamp < 0 ||
      h.last_offset_delta != static_cast<std::int32_t>(records.size()) - 1) {
    return std::nullopt;
  }
  EncodedRecords out{batch.records_bytes(), h.base_timestamp, -1, std::nullopt};
  // Worked out only where the builder will use it.
  if (out.bytes.size() >= RecordBatchBuilder::kKnownCrcMinBytes) out.crc = batch.records_crc();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::int64_t timestamp = batch.timestamp_of(records[i]);
    if (records[i].offset_delta != static_cast<std::int32_t>(i) || timestamp < 0) return std::nullopt;
    out.max_timestamp = std::max(out.max_timestamp, timestamp);
  }
  return out;
}

// Produce v3+: one or more RecordBatch v2 back to back. Kafka insists on
// exactly one (ProduceRequest.validateRecords); several are taken here as one
// run, in order, since nothing is lost by it.
// An idempotent batch's identity, or why it can't be deduplicated.
std::optional<EntryError> client_batch_of(const RecordBatchHeader& h, std::size_t batches,
                                          std::optional<ClientBatch>& out) {
  if (h.producer_id < 0) return std::nullopt;
  if (batches != 1) {
    return EntryError{ErrorCode::kInvalidRecord, "an idempotent producer sends exactly one batch per partition"};
  }
  if (h.producer_epoch < 0 || h.base_sequence < 0 || h.last_offset_delta < 0) {
    return EntryError{ErrorCode::kInvalidRecord, "an idempotent batch needs an epoch and a base sequence"};
  }
  out = ClientBatch{h.producer_id, h.producer_epoch, h.base_sequence,
                    last_sequence_of(h.base_sequence, h.last_offset_delta)};
  return std::nullopt;
}

std::optional<EntryError> convert_batches(ByteView set, RunStorage& storage, PartitionProduce& entry,
                                          std::size_t& budget, DecodeBudget& decoded, RecordChecks& limits) {
  RecordRun& run = entry.run;
  auto split = split_record_batches(set);
  if (!split) return from_decode_error(split.error(), decoded);
  if (split->has_partial()) {
    return EntryError{ErrorCode::kCorruptMessage,
                      "records: a batch is cut short at offset " + std::to_string(split->partial_offset)};
  }
  if (split->batches.empty()) {
    return EntryError{ErrorCode::kInvalidRecord, "Produce v3+ needs a record batch per partition"};
  }
  for (ByteView wire : split->batches) {
    if (wire.size() > record_batch_layout::kMagic && wire[record_batch_layout::kMagic] != kRecordBatchMagic) {
      return EntryError{ErrorCode::kInvalidRecord, "Produce v3+ carries only RecordBatch v2 (magic 2)"};
    }
    // The batch object itself: a request of many empty 61-byte batches
    // would otherwise cost memory the budget never sees.
    if (!decoded.take(1, sizeof(RecordBatchView))) return over_budget(decoded);
    RecordBatchReadOptions read;
    read.max_decompressed_bytes = budget;
    read.budget = &decoded;
    auto batch = decode_record_batch(wire, read);
    if (!batch) return from_decode_error(batch.error(), decoded);
    const RecordBatchHeader& h = batch->header();
    if (h.is_transactional() || h.is_control()) {
      return EntryError{ErrorCode::kTransactionalIdAuthorizationFailed,
                        "produce-proxy does not run transactions (transactional or control batch)"};
    }
    if (auto error = client_batch_of(h, split->batches.size(), entry.client_batch)) return error;
    budget -= std::min(budget, decompressed_size(*batch));
    if (!decoded.take(batch->records().size(), sizeof(RunRecord))) return over_budget(decoded);
    // Decoded and charged already; the usual single batch then costs one
    // allocation, not one per doubling.
    if (run.records.empty()) run.records.reserve(batch->records().size());
    for (const RecordView& r : batch->records()) {
      const std::int64_t timestamp = h.timestamp_type() == TimestampType::kCreateTime ? batch->timestamp_of(r) : -1;
      if (auto error = check_record(limits, run.records.size(), timestamp, r.key, r.value, r.headers)) return error;
      RunRecord& out = run.records.emplace_back();
      out.timestamp_ms = timestamp;
      out.key = r.key;
      out.value = r.value;
      out.headers = r.headers;
    }
    storage.batches.push_back(std::move(*batch));
  }
  if (split->batches.size() == 1) run.encoded = encoded_as_is(storage.batches.front());
  return std::nullopt;
}

// Produce v0-2: a legacy MessageSet of magic 0/1 messages, wrappers unwrapped.
std::optional<EntryError> convert_message_set(ByteView set, RunStorage& storage, RecordRun& run, std::size_t& budget,
                                              DecodeBudget& memory, RecordChecks& limits) {
  MessageSetReadOptions read;
  read.max_decompressed_bytes = budget;
  read.trailing_partial = TrailingPartial::kReject;
  read.budget = &memory;
  auto decoded = decode_message_set(set, read);
  if (!decoded) return from_decode_error(decoded.error(), memory);
  std::size_t inflated = 0;
  if (!memory.take(decoded->records().size(), sizeof(RunRecord))) return over_budget(memory);
  run.records.reserve(decoded->records().size());
  for (const LegacyRecordView& r : decoded->records()) {
    // Magic 0 has no timestamp: -1 here, the pipeline stamps the receive time
    // (docs/design/PIPELINE.md, decisions: a record without a timestamp gets
    // the receive time). A client's LogAppendTime is the broker's to set.
    const std::int64_t timestamp = (r.timestamp && r.timestamp_type == TimestampType::kCreateTime) ? *r.timestamp : -1;
    if (auto error = check_record(limits, run.records.size(), timestamp, r.key, r.value, {})) return error;
    RunRecord& out = run.records.emplace_back();
    out.timestamp_ms = timestamp;
    out.key = r.key;
    out.value = r.value;
    if (r.wrapper_codec != CompressionCodec::kNone) {
      inflated += (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0) + 26;
    }
  }
  budget -= std::min(budget, inflated);
  storage.message_set.emplace(std::move(*decoded));
  return std::nullopt;
}

// What refuses an entry whatever its records: a transactional request, a
// v13+ topic left without a name (its id is unknown), an illegal name.
std::optional<EntryError> refused_before_records(const ProduceRequest& request, std::int16_t version,
                                                 const ProduceTopicData& topic) {
  if (request.transactional_id) {
    return EntryError{ErrorCode::kTransactionalIdAuthorizationFailed,
                      "produce-proxy does not run transactions (transactional_id is set)"};
  }
  if (version >= kProduceTopicIdVersion && topic.name.empty()) {
    return EntryError{ErrorCode::kUnknownTopicId,
                      "no topic with id " + topic.topic_id.to_string() + " is known upstream"};
  }
  if (!is_legal_topic_name(topic.name)) {
    return EntryError{ErrorCode::kInvalidTopicException, "topic name is not legal in Kafka"};
  }
  return std::nullopt;
}

}  // namespace

void name_topics_by_id(ProduceRequest& request, std::int16_t version,
                       const std::function<std::optional<std::string>(const Uuid&)>& name_of) {
  if (version < kProduceTopicIdVersion) return;
  for (ProduceTopicData& topic : request.topic_data) {
    topic.name = name_of(topic.topic_id).value_or(std::string());
  }
}

bool is_legal_topic_name(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

ProduceConversion convert_produce_request(
    const ProduceRequest& request, std::int16_t version,
    std::shared_ptr<const void> frame,  // NOLINT(performance-unnecessary-value-param): a sink; the front end moves its
                                        // frame in, nothing is copied
    const ProduceConversionOptions& options) {
  ProduceConversion out;
  std::size_t budget = options.max_decompressed_bytes;
  DecodeBudget decoded(options.max_decoded_bytes);
  for (const ProduceTopicData& topic : request.topic_data) {
    for (const ProducePartitionData& partition : topic.partition_data) {
      PartitionProduce& entry = out.partitions.emplace_back();
      entry.topic = topic.name;
      entry.partition = partition.index;
      const ByteView set = partition.records.data.value_or(ByteView{});
      entry.wire_bytes = set.size();

      std::optional<EntryError> error = refused_before_records(request, version, topic);
      auto storage = std::make_shared<RunStorage>();
      storage->frame = frame;
      const std::size_t decoded_before = decoded.used();
      if (!error) {
        RecordChecks checks{options, options.topic_batch_limit ? options.topic_batch_limit(topic.name) : 0};
        if (version >= 3) {
          error = convert_batches(set, *storage, entry, budget, decoded, checks);
        } else if (!set.empty()) {
          error = convert_message_set(set, *storage, entry.run, budget, decoded, checks);
        }
        if (!error) error = reserve_batch_copy(entry.run, decoded, checks);
      }
      if (error && error->over_decoded_bytes && options.max_decoded_bytes_is_room) {
        error->error = ErrorCode::kNotEnoughReplicas;
        error->message = "decodes to more than the " + std::to_string(options.max_decoded_bytes) +
                         " bytes of room (and overdraft) left in a memory budget full of requests not yet decoded;"
                         " not appended, retry";
      }
      if (error) {
        out.over_decoded_bytes = out.over_decoded_bytes || error->over_decoded_bytes;
        entry.error = error->error;
        entry.error_message = std::move(error->message);
        entry.run = RecordRun{};
        entry.client_batch.reset();
        continue;
      }
      // What the run holds in memory beside the client's frame (which the
      // front end charges once, whole, for as long as any run pins it): all
      // that was decoded for it (decompressed bytes, record and header
      // views, the run's records, the upstream batch bytes it will be copied
      // into while the frame is still held).
      entry.run.size_bytes = decoded.used() - decoded_before;
      entry.run.storage = std::move(storage);
      out.records += entry.run.records.size();
      out.wire_bytes += set.size();
    }
  }
  out.decoded_bytes = decoded.used();
  return out;
}

}  // namespace pp
