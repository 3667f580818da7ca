// The entries of the spool's segments (docs/design/SPOOL.md, "Entries"), as
// plain data: what the writer encodes, what the segment reader decodes and
// what recovery replays. Every entry carries a spool-wide entry id (from 1,
// strictly increasing across segments, never reused) by which later entries
// refer to it, and the wall-clock time it was appended.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "proxy/base/bytes.h"

namespace pp::spool {

using EntryId = std::uint64_t;
inline constexpr EntryId kNoEntry = 0;

// Client records to deliver: one partition's records of one client request,
// as one RecordBatch v2 (the client's own, or the one its legacy MessageSet
// was converted to). `batch` is the encoded batch; decoded entries borrow it
// from the segment bytes they were read from.
struct RecordsEntry {
  std::string topic;
  std::int32_t partition = 0;
  std::int16_t acks = -1;
  // The client's own idempotent identity, so its dedup state can be rebuilt
  // after a restart; -1 / -1 / -1 for a client without one.
  std::int64_t client_producer_id = -1;
  std::int16_t client_producer_epoch = -1;
  std::int32_t client_base_sequence = -1;
  std::int32_t record_count = 0;
  ByteView batch;
  bool operator==(const RecordsEntry& o) const {
    return topic == o.topic && partition == o.partition && acks == o.acks &&
           client_producer_id == o.client_producer_id && client_producer_epoch == o.client_producer_epoch &&
           client_base_sequence == o.client_base_sequence && record_count == o.record_count &&
           bytes_equal(batch, o.batch);
  }
};

// The upstream producer's identity, written when it is first held and after
// every change (epoch bump, new producer id), and again at the head of every
// segment so that deleting old segments never loses it.
struct IdentityEntry {
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  bool operator==(const IdentityEntry&) const = default;
};

// A contiguous range of one records entry's records: records
// [first_record, first_record + record_count) of entry `records`.
struct RecordRange {
  EntryId records = kNoEntry;
  std::int32_t first_record = 0;
  std::int32_t record_count = 0;
  bool operator==(const RecordRange&) const = default;
};

// An upstream batch's identity, written (and durable) before the batch is
// first sent: its partition, producer id and epoch, base sequence, record
// count and exactly which client records it carries, in order. A batch
// rebuilt with other sequences or boundaries (an epoch bump's renumbering, a
// split, isolation, bisection) is a new entry that `supersedes` the old one.
struct SequencedEntry {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = 0;
  std::int32_t record_count = 0;
  EntryId supersedes = kNoEntry;
  std::vector<RecordRange> ranges;
  bool operator==(const SequencedEntry&) const = default;
};

enum class Outcome : std::uint8_t {
  kAcknowledged = 1,  // the upstream acknowledged the batch
  kFailed = 2,        // given up: the batch or records will never be sent again
  kVoid = 3,          // an entry whose append failed: whatever of it reached the disk is not to be used
};

// How an earlier entry ended: a batch (a SequencedEntry's id) acknowledged
// or failed, client records failed before they were sequenced, or any entry
// voided after its append failed.
struct ResolvedEntry {
  EntryId target = kNoEntry;
  Outcome outcome = Outcome::kAcknowledged;
  std::int16_t error_code = 0;    // Kafka's error for kFailed, else 0
  std::int64_t base_offset = -1;  // the upstream offset for kAcknowledged, else -1
  bool operator==(const ResolvedEntry&) const = default;
};

struct TopicPartitions {
  std::string topic;
  std::int32_t partitions = 0;
  bool operator==(const TopicPartitions&) const = default;
};

// The cluster view last learned from the upstream (topics and their
// partition counts), to answer Metadata on a cold start with Kafka down.
struct ClusterViewEntry {
  std::vector<TopicPartitions> topics;
  bool operator==(const ClusterViewEntry&) const = default;
};

// How a retained client batch stood when the snapshot was taken.
enum class ClientBatchState : std::uint8_t {
  kAcked = 1,           // answered with `error_code` 0 and its offsets
  kFailed = 2,          // failed, not appended: a retry is sent again
  kOutcomeUnknown = 3,  // failed, possibly appended: a retry gets the failure again
  kPending = 4,         // not answered yet: settled at restore by the Records entries
};

// One of the last batches of a client producer on a partition, with its answer.
struct ClientBatchSnapshot {
  std::int16_t epoch = 0;
  std::int32_t first_sequence = 0;
  std::int32_t last_sequence = 0;
  ClientBatchState state = ClientBatchState::kAcked;
  std::int16_t error_code = 0;
  std::int64_t base_offset = -1;
  std::int64_t log_append_time_ms = -1;
  std::int64_t log_start_offset = -1;
  bool operator==(const ClientBatchSnapshot&) const = default;
};

struct ClientPartitionSnapshot {
  std::string topic;
  std::int32_t partition = 0;
  std::int16_t epoch = 0;
  std::int32_t last_sequence = -1;
  std::vector<ClientBatchSnapshot> batches;  // oldest first
  bool operator==(const ClientPartitionSnapshot&) const = default;
};

struct ClientProducerSnapshot {
  std::int64_t producer_id = 0;
  std::int16_t epoch = 0;
  bool bumped_by_request = false;  // the epoch came from an InitProducerId bump
  std::vector<ClientPartitionSnapshot> partitions;
  bool operator==(const ClientProducerSnapshot&) const = default;
};

// The idempotent clients' dedup state (docs/design/CLIENT_DEDUP.md) as of
// the entry: their producer ids and epochs and, per partition, the sequences
// and answers of their last batches; and the next producer id the proxy
// would hand out. Written in every segment's checkpoint; what follows it is
// rebuilt from later Records entries' client identity.
struct ClientProducersEntry {
  std::int64_t next_producer_id = 0;
  std::vector<ClientProducerSnapshot> producers;
  bool operator==(const ClientProducersEntry&) const = default;
};

using EntryBody =
    std::variant<RecordsEntry, IdentityEntry, SequencedEntry, ResolvedEntry, ClusterViewEntry, ClientProducersEntry>;

// One decoded entry with its place in the segment.
struct Entry {
  EntryId id = kNoEntry;
  std::int64_t time_ms = 0;  // wall clock at append
  EntryBody body;
};

}  // namespace pp::spool
