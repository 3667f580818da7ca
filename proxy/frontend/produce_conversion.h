// Produce request -> record runs: the one place client record sets (legacy
// MessageSet v0/v1 with compressed wrappers, RecordBatch v2 with any codec)
// become the RecordRuns the pipeline takes, one per (topic, partition) entry,
// in request order (docs/design/PIPELINE.md, decisions: one record run per
// partition of a request). Pure: no sockets, no logging, so it is unit-tested
// against golden client bytes and fuzzed.
//
// A record set that fails its checks does not fail the request: its entry
// carries the error the protocol defines (CORRUPT_MESSAGE for a bad CRC or
// structure) and the other entries proceed, as a broker does per partition.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/frontend/client_producers.h"
#include "proxy/pipeline/record_run.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/records/compression.h"

namespace pp {

struct ProduceConversionOptions {
  // All compressed sets of one request together may decompress to this much.
  std::size_t max_decompressed_bytes = 256 * 1048576;
  // Everything one request decodes to in memory, all partitions together:
  // decompressed bytes, the record and header views, the runs' records and
  // the upstream batch bytes they will be copied into
  // (RecordRun::batch_bytes_reserved; proxy/records/decode_budget.h). The entry that would cross it is refused
  // with MESSAGE_TOO_LARGE before the memory is taken; what a refused entry
  // had decoded by then stays charged.
  std::size_t max_decoded_bytes = 64 * 1048576;
  // max_decoded_bytes is the memory budget's room, not the request's own cap
  // (docs/design/ARCHITECTURE.md, "Bounded everything", "Overdraft"): the entry
  // that crosses it is refused with NOT_ENOUGH_REPLICAS instead, retriable and
  // not appended, because the same request fits once the budget has room.
  bool max_decoded_bytes_is_room = false;
  // Kafka's message.timestamp.after.max.ms / before.max.ms, against now_ms
  // (the wall clock): a CreateTime record further ahead or behind is refused
  // with INVALID_TIMESTAMP, as the topic would refuse the upstream batch it
  // shares with other clients. -1: no limit (the defaults here; the front end
  // passes listener.message_timestamp_*).
  std::int64_t now_ms = 0;
  std::int64_t timestamp_after_max_ms = -1;
  std::int64_t timestamp_before_max_ms = -1;
  // A record that alone, in a RecordBatch v2, would exceed this is refused
  // with MESSAGE_TOO_LARGE: the pipeline could only send it as an upstream
  // request over its own cap, which a broker drops. 0: no limit.
  std::size_t max_record_batch_bytes = 0;
  // The topic's own limit, its max.message.bytes upstream (0: unknown), which
  // Kafka applies to the batch as written, after compression: a record over
  // it uncompressed is compressed alone with `compression` (the codec the
  // pipeline will use) and refused with MESSAGE_TOO_LARGE only if it is
  // still over. Unset: no topic limits.
  std::function<std::size_t(std::string_view topic)> topic_batch_limit;
  CompressionCodec compression = CompressionCodec::kNone;
};

// One (topic, partition) entry of the request.
struct PartitionProduce {
  std::string topic;
  std::int32_t partition = 0;
  // Not kNone: answer the entry with this and submit nothing.
  ErrorCode error = ErrorCode::kNone;
  std::string error_message;
  // The records (when error is kNone). May be empty: an empty legacy set is
  // answered at once, nothing is sent upstream for it.
  RecordRun run;
  std::size_t wire_bytes = 0;  // the record set as the client sent it
  // An idempotent client's batch (producer id >= 0): what the front end's
  // dedup (ClientProducers) checks before anything is submitted.
  std::optional<ClientBatch> client_batch;
};

struct ProduceConversion {
  std::vector<PartitionProduce> partitions;  // request order
  std::size_t records = 0;                   // in entries without an error
  std::size_t wire_bytes = 0;                // of entries without an error
  std::size_t decoded_bytes = 0;             // of the whole request, charged to max_decoded_bytes
  // Some entry was refused because max_decoded_bytes ran out (not for a cap
  // of its own): with more room, the request may decode whole.
  bool over_decoded_bytes = false;
};

// `frame` holds the bytes the request's RecordsViews point into; every run
// keeps it (and any decompressed buffer) alive through RecordRun::storage.
//
// Entry errors:
// - transactional_id set, or a batch with the transactional or control bit:
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED (the proxy runs no transactions; the
//   code is what a broker answers a producer not allowed to use them, and
//   every client treats it as fatal rather than retrying).
// - v13+ (topics by id, KIP-516): a topic left without a name by
//   name_topics_by_id (its id is not one the proxy follows): UNKNOWN_TOPIC_ID,
//   as a broker answers an id it does not know; the client refreshes its
//   metadata and retries.
// - topic name not legal in Kafka: INVALID_TOPIC_EXCEPTION.
// - CRC mismatch, bad lengths, a cut-short entry: CORRUPT_MESSAGE.
// - the wrong format for the version (Produce v3+ carries magic 2 only,
//   v0-2 magic 0/1 only; ProduceRequest.validateRecords), a v3+ entry
//   without a batch: INVALID_RECORD.
// - an unknown codec: UNSUPPORTED_COMPRESSION_TYPE.
// - over the decompression cap, or decoding to more memory than
//   max_decoded_bytes: MESSAGE_TOO_LARGE. It is what a broker answers a batch
//   over its size limit; the Java producer then splits the batch and retries
//   the halves (Sender.completeBatch), which is right for a request that is
//   only too big, and gives up on a single record. CORRUPT_MESSAGE would be
//   retried as it is, for ever; INVALID_RECORD says the record is malformed,
//   and 3,000,000 empty headers are legal Kafka. With
//   max_decoded_bytes_is_room, NOT_ENOUGH_REPLICAS for the max_decoded_bytes
//   case: the client retries it as it is, as it should.
// - a CreateTime record outside the timestamp limits: INVALID_TIMESTAMP
//   (the broker's message, with the record's index).
// - a record that cannot fit in max_record_batch_bytes, or in a batch of its
//   topic's limit once compressed: MESSAGE_TOO_LARGE.
// - an idempotent batch (producer id >= 0) that is not alone in its entry, or
//   has a negative epoch or base sequence: INVALID_RECORD.
// Idempotent batches give their records to the run as plain records (the
// proxy's own producer id replaces the client's upstream) and their identity
// to `client_batch`.
ProduceConversion convert_produce_request(const ProduceRequest& request, std::int16_t version,
                                          std::shared_ptr<const void> frame,
                                          const ProduceConversionOptions& options = {});

// Produce v13+ names each topic by id only (KIP-516): fills each topic's name
// with `name_of(topic_id)`, so conversion, dedup and the pipeline work by
// name as for every other version. A topic `name_of` does not know keeps an
// empty name (answered UNKNOWN_TOPIC_ID by convert_produce_request). Below
// v13 the request is left as decoded.
void name_topics_by_id(ProduceRequest& request, std::int16_t version,
                       const std::function<std::optional<std::string>(const Uuid&)>& name_of);

// Kafka's topic name rule (Topic.validate): 1-249 of [a-zA-Z0-9._-], not "."
// or "..".
bool is_legal_topic_name(std::string_view name);

}  // namespace pp
