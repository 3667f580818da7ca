// Produce request -> record runs: the one place client record sets (legacy
// MessageSet v0/v1 with compressed wrappers, RecordBatch v2 with any codec)
// become the RecordRuns the pipeline takes, one per (topic, partition) entry,
// in request order (docs/design/PIPELINE.md decision 8). Pure: no sockets, no logging, so
// it is unit-tested against golden client bytes and fuzzed.
//
// A record set that fails its checks does not fail the request: its entry
// carries the error the protocol defines (CORRUPT_MESSAGE for a bad CRC or
// structure) and the other entries proceed, as a broker does per partition.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "proxy/pipeline/record_run.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {

struct ProduceConversionOptions {
  // All compressed sets of one request together may decompress to this much.
  std::size_t max_decompressed_bytes = 256 * 1048576;
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
};

struct ProduceConversion {
  std::vector<PartitionProduce> partitions;  // request order
  std::size_t records = 0;                   // in entries without an error
  std::size_t wire_bytes = 0;                // of entries without an error
};

// `frame` holds the bytes the request's RecordsViews point into; every run
// keeps it (and any decompressed buffer) alive through RecordRun::storage.
//
// Entry errors:
// - transactional_id set, or a batch with the transactional or control bit:
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED (the proxy runs no transactions; the
//   code is what a broker answers a producer not allowed to use them, and
//   every client treats it as fatal rather than retrying).
// - topic name not legal in Kafka: INVALID_TOPIC_EXCEPTION.
// - CRC mismatch, bad lengths, a cut-short entry: CORRUPT_MESSAGE.
// - the wrong format for the version (Produce v3+ carries magic 2 only,
//   v0-2 magic 0/1 only; ProduceRequest.validateRecords), a v3+ entry
//   without a batch: INVALID_RECORD.
// - an unknown codec: UNSUPPORTED_COMPRESSION_TYPE.
// - over the decompression cap: MESSAGE_TOO_LARGE.
// Idempotent batches (producer id >= 0, not transactional) are taken as plain
// records: the proxy's own producer id replaces the client's upstream.
ProduceConversion convert_produce_request(const ProduceRequest& request, std::int16_t version,
                                          std::shared_ptr<const Bytes> frame,
                                          const ProduceConversionOptions& options = {});

// Kafka's topic name rule (Topic.validate): 1-249 of [a-zA-Z0-9._-], not "."
// or "..".
bool is_legal_topic_name(std::string_view name);

}  // namespace pp
