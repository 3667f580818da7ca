// The producer ids the front end hands to idempotent clients, and the broker's
// dedup rules applied to their batches (docs/design/CLIENT_DEDUP.md).
//
// A client's producer id lives only between the client and the proxy: its
// records go upstream re-batched under the proxy's own producer id. So the
// proxy must do for the client what a broker would: recognise a retry by
// (client producer id, epoch, topic-partition, first and last sequence) and
// answer it with the original outcome, instead of appending it again.
//
// Rules, from Kafka 4.x (UnifiedLog.analyzeAndValidateProducerState,
// ProducerStateEntry.findDuplicateBatch, ProducerAppendInfo.checkProducerEpoch
// and checkSequence), in the order they apply:
//  1. Same epoch and the same first and last sequence as a retained batch:
//     a duplicate. Acknowledged: its original outcome (offsets) again. Still
//     in flight upstream: the retry waits for the original's outcome (the
//     broker has no such case; the proxy does, since it answers only after
//     upstream). Failed upstream, not appended: sent again (nothing of it is
//     in the log under this batch's identity). Failed upstream with its
//     outcome unknown (ClientBatchOutcome::maybe_written): answered that
//     failure again and never sent again, since its records may be in the
//     log; the client's own delivery timeout ends its retries, as when a
//     broker stays unreachable.
//  2. An epoch lower than the partition's: INVALID_PRODUCER_EPOCH.
//  3. A higher epoch: its first sequence must be 0 (OUT_OF_ORDER_SEQUENCE_NUMBER
//     otherwise), unless the partition has no state.
//  4. The same epoch: the first sequence must follow the last one (wrapping at
//     INT32_MAX to 0), else OUT_OF_ORDER_SEQUENCE_NUMBER. A failed batch
//     rewinds "the last one" to before it; a batch ahead of such a failed
//     batch's retry is answered NOT_ENOUGH_REPLICAS (not appended, retriable)
//     rather than OUT_OF_ORDER_SEQUENCE_NUMBER, which clients take for records
//     lost by the broker and answer with an epoch bump.
//  5. No state for the producer or the partition (never seen, expired, or the
//     proxy restarted without a spool to restore it from): any sequence is
//     accepted, as Kafka 2.5+ does; Kafka 4.x never answers
//     UNKNOWN_PRODUCER_ID to a Produce.
//
// Bounds ("Bounded everything", ARCHITECTURE.md): at most `max_producers` producers (the
// least recently used one with nothing in flight is forgotten to make room),
// each forgotten after `idle_timeout_ms` without a request, and per partition
// the last `batches_to_retain` batches (batches in flight are never dropped).
//
// Pure: no libuv, no logging, times are passed in. Loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proxy/protocol/error_code.h"

namespace pp {

struct ClientProducersConfig {
  std::size_t max_producers = 10000;
  std::int64_t idle_timeout_ms = 86400000;  // Kafka's producer.id.expiration.ms
  std::size_t batches_to_retain = 5;        // what every client assumes a broker keeps
  std::int64_t first_producer_id = 0;       // ids are handed out from here up
};

// What identifies a client batch (RecordBatch v2 header fields).
struct ClientBatch {
  std::int64_t producer_id = -1;
  std::int16_t epoch = -1;
  std::int32_t first_sequence = -1;
  std::int32_t last_sequence = -1;
};

// The last sequence of a batch: base + last_offset_delta, wrapping as Kafka's
// DefaultRecordBatch.incrementSequence does.
std::int32_t last_sequence_of(std::int32_t base_sequence, std::int32_t last_offset_delta);

struct ClientBatchOutcome {
  ErrorCode error = ErrorCode::kNone;
  std::int64_t base_offset = -1;
  std::int64_t log_append_time_ms = -1;
  std::int64_t log_start_offset = -1;
  std::string error_message;
  // The batch was withdrawn unsent at a request's deadline (RunResult::withdrawn).
  bool withdrawn = false;
  // It failed, but an attempt upstream may be in the log (RunResult::maybe_written).
  bool maybe_written = false;
};

enum class BatchVerdict {
  kAppend,             // new (or a retry of a failed one): send it, then complete(handle)
  kDuplicateAcked,     // answer `outcome`, the original's
  kDuplicateInFlight,  // attach(handle, ...) and answer when the original completes
  kReject,             // answer `outcome.error`
};

struct BatchCheck {
  BatchVerdict verdict = BatchVerdict::kReject;
  std::uint64_t handle = 0;
  ClientBatchOutcome outcome;
};

struct InitProducerIdAnswer {
  ErrorCode error = ErrorCode::kNone;
  std::int64_t producer_id = -1;
  std::int16_t epoch = -1;
  bool bumped = false;  // a KIP-360 bump of a known id, not a fresh id
};

using BatchWaiter = std::function<void(const ClientBatchOutcome&)>;

// The dedup state as plain data, to persist it and restore it after a
// restart (docs/design/SPOOL.md, "Client producers"): per producer its id,
// epoch and, per partition, the last batches with their answers. Batches in
// flight are kPending: their answer is not known yet.
struct ClientProducersSnapshot {
  enum class State : std::uint8_t { kAcked, kFailed, kOutcomeUnknown, kPending };
  struct Batch {
    std::int16_t epoch = 0;
    std::int32_t first_sequence = 0;
    std::int32_t last_sequence = 0;
    State state = State::kAcked;
    ClientBatchOutcome outcome;  // error_message is not kept
  };
  struct Partition {
    std::string topic;
    std::int32_t partition = 0;
    std::int16_t epoch = 0;
    std::int32_t last_sequence = -1;
    std::vector<Batch> batches;  // oldest first
  };
  struct Producer {
    std::int64_t producer_id = 0;
    std::int16_t epoch = 0;
    bool bumped_by_request = false;
    std::vector<Partition> partitions;
  };
  // The next id the proxy would hand out; -1: none known.
  std::int64_t next_producer_id = -1;
  std::vector<Producer> producers;  // by producer id
};

// A client batch known to be durable (a spooled Records entry with its
// client identity), replayed onto a restored snapshot.
struct DurableClientBatch {
  std::string topic;
  std::int32_t partition = 0;
  ClientBatch batch;
};

class ClientProducers {
 public:
  explicit ClientProducers(ClientProducersConfig config);

  // InitProducerId from an idempotent client. producer_id/epoch -1: a fresh
  // id at epoch 0. A known id at its current epoch (KIP-360, v3+): the same
  // id, epoch + 1 (a fresh id once the epoch is exhausted); a retry of that
  // bump gets the same answer. Anything else: a fresh id, which is what a
  // Kafka broker gives every idempotent producer.
  InitProducerIdAnswer init_producer_id(std::int64_t producer_id, std::int16_t epoch, std::uint64_t now_ms);

  BatchCheck check(const std::string& topic, std::int32_t partition, const ClientBatch& batch, std::uint64_t now_ms);
  // A retry of a batch in flight (kDuplicateInFlight): `waiter` gets its outcome.
  void attach(std::uint64_t handle, BatchWaiter waiter);
  // The upstream outcome of a kAppend batch; returns the waiters to call.
  std::vector<BatchWaiter> complete(std::uint64_t handle, const ClientBatchOutcome& outcome);

  // Forgets producers idle for idle_timeout_ms with nothing in flight.
  void expire(std::uint64_t now_ms);

  // The state as data, producers by id; batches in flight are kPending.
  ClientProducersSnapshot snapshot() const;
  // Once at start, before any client is served: takes `snapshot`, then
  // replays `durable` (in spool order) onto it, each an acknowledged batch
  // answered with offset -1 unless it is behind its partition's state; a
  // kPending batch matched by none of them is restored as failed with its
  // outcome unknown. Ids are then handed out from the snapshot's next id
  // plus kRestartIdStride (or as configured, without a snapshot id). Bounds
  // apply as to any producer; every restored producer counts as used now.
  void restore(const ClientProducersSnapshot& snapshot, const std::vector<DurableClientBatch>& durable,
               std::uint64_t now_ms);
  // How far a restart moves the id counter past the persisted one: more ids
  // than a proxy hands out between two snapshots, so none is handed out twice.
  static constexpr std::int64_t kRestartIdStride = std::int64_t{1} << 40;

  std::size_t producers() const { return producers_.size(); }
  // What this state costs against the memory budget (an estimate).
  std::size_t memory_bytes() const;
  std::size_t batches_in_flight() const { return in_flight_.size(); }
  const ClientProducersConfig& config() const { return config_; }

 private:
  enum class BatchState { kInFlight, kAcked, kFailed, kOutcomeUnknown };
  struct Retained {
    std::int16_t epoch = -1;
    std::int32_t first_sequence = -1;
    std::int32_t last_sequence = -1;
    BatchState state = BatchState::kInFlight;
    std::uint64_t handle = 0;
    ClientBatchOutcome outcome;
  };
  struct PartitionState {
    std::int16_t epoch = -1;  // -1: no state (rule 5 above)
    std::int32_t last_sequence = -1;
    std::deque<Retained> batches;  // oldest first
  };
  using PartitionKey = std::pair<std::string, std::int32_t>;
  struct Producer {
    std::int16_t epoch = 0;  // the highest seen or handed out
    bool bumped_by_request = false;
    std::uint64_t last_used_ms = 0;
    std::size_t in_flight = 0;
    std::map<PartitionKey, PartitionState> partitions;
  };
  struct InFlight {
    std::int64_t producer_id = -1;
    PartitionKey partition;
    std::vector<BatchWaiter> waiters;
  };

  Producer* make_room_and_add(std::int64_t producer_id, std::int16_t epoch, std::uint64_t now_ms);
  InitProducerIdAnswer fresh_id(std::uint64_t now_ms);
  std::optional<BatchCheck> find_duplicate(Producer& producer, PartitionState& state, const PartitionKey& key,
                                           const ClientBatch& batch);
  std::optional<ErrorCode> sequence_error(const PartitionState& state, const ClientBatch& batch,
                                          std::string& message) const;
  BatchCheck append(Producer& producer, PartitionState& state, const PartitionKey& key, const ClientBatch& batch);
  void rewind_to_failed_tail(PartitionState& state);
  static bool failed_next(const PartitionState& state);
  void trim(PartitionState& state);
  void uncount(const Producer& producer);
  void maybe_expire(std::uint64_t now_ms);
  void restore_producer(const ClientProducersSnapshot::Producer& snapshot, std::uint64_t now_ms);
  void replay(const DurableClientBatch& durable, std::uint64_t now_ms);
  void settle_pending();

  ClientProducersConfig config_;
  std::unordered_map<std::int64_t, Producer> producers_;
  std::unordered_map<std::uint64_t, InFlight> in_flight_;
  std::int64_t next_producer_id_;
  std::uint64_t next_handle_ = 1;
  std::uint64_t next_expiry_scan_ms_ = 0;
  std::size_t partition_states_ = 0;  // across all producers
  std::size_t retained_batches_ = 0;  // across all partitions
};

}  // namespace pp
