// Broker-side idempotence for one partition, as Kafka keeps it: per producer
// id, the epoch and the metadata of the last N batches (ProducerStateEntry,
// BatchMetadata), and the checks a client batch must pass before it is
// appended (UnifiedLog.analyzeAndValidateProducerState,
// ProducerAppendInfo.checkProducerEpoch / checkSequence). docs/design/PIPELINE.md D.1-D.3.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

#include "proxy/protocol/error_code.h"
#include "tests/broker/cluster_options.h"

namespace pp::test_broker {

inline constexpr std::int16_t kNoProducerEpoch = -1;
inline constexpr std::int32_t kNoSequence = -1;

// Kafka's BatchMetadata: enough to answer a retry with its original offsets.
struct BatchMetadata {
  std::int32_t last_seq = kNoSequence;
  std::int64_t last_offset = -1;
  std::int32_t offset_delta = 0;  // last_offset_delta of the batch
  std::int64_t timestamp = -1;    // the batch's MaxTimestamp

  std::int32_t first_seq() const;
  std::int64_t first_offset() const { return last_offset - offset_delta; }
};

// Kafka's ProducerStateEntry, without the transaction fields.
struct ProducerStateEntry {
  std::int16_t epoch = kNoProducerEpoch;
  std::deque<BatchMetadata> batches;  // oldest first, at most `retain`
  std::int64_t last_timestamp = -1;

  const BatchMetadata* find_duplicate(std::int16_t batch_epoch, std::int32_t first_seq, std::int32_t last_seq) const;
  std::int32_t last_seq() const { return batches.empty() ? kNoSequence : batches.back().last_seq; }
};

// The producer fields of an incoming batch's header.
struct BatchProducerInfo {
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = kNoProducerEpoch;
  std::int32_t base_sequence = kNoSequence;
  std::int32_t last_offset_delta = 0;
  std::int64_t max_timestamp = -1;

  std::int32_t last_sequence() const;
};

// The verdict on a batch: append it, answer it as a duplicate of an earlier
// append (NONE with that batch's offsets), or refuse it with an error.
struct SequenceVerdict {
  enum class Kind : std::uint8_t { kAppend, kDuplicate, kReject };
  Kind kind = Kind::kAppend;
  BatchMetadata duplicate_of;          // for kDuplicate
  ErrorCode error = ErrorCode::kNone;  // for kReject
  const char* reason = "";             // for the log line

  static SequenceVerdict append() { return {}; }
  static SequenceVerdict duplicate(const BatchMetadata& m) {
    return {Kind::kDuplicate, m, ErrorCode::kNone, "duplicate of a retained batch"};
  }
  static SequenceVerdict reject(ErrorCode e, const char* why) { return {Kind::kReject, {}, e, why}; }
};

// All producers' state on one partition. It belongs to the partition, not to
// a broker: Kafka's followers rebuild it from the replicated log, so it moves
// with leadership (rebuild() replays a log when the window changes or a tail
// was truncated).
class ProducerStateManager {
 public:
  // `retain`: how many batches per producer the current leader keeps.
  explicit ProducerStateManager(int retain = kDefaultRetain) : retain_(retain) {}

  // D.2 step 5 for a client batch with producer_id >= 0. `ever_written`: the
  // partition has held records at some point (KAFKA-15591's 4.5 rule).
  SequenceVerdict check(const BatchProducerInfo& batch, NoStateRule rule, bool ever_written) const;

  // After an append (ProducerAppendInfo.appendDataBatch + ProducerStateManager.update):
  // a new epoch clears the retained batches (maybeUpdateProducerEpoch), a full
  // deque drops its oldest entry (addBatchMetadata).
  void on_append(const BatchProducerInfo& batch, std::int64_t last_offset);

  // Forgets everything; then the caller replays the log with on_append.
  void reset(int retain);
  int retain() const { return retain_; }

  const ProducerStateEntry* find(std::int64_t producer_id) const;
  std::size_t producer_count() const { return entries_.size(); }

 private:
  int retain_;
  std::unordered_map<std::int64_t, ProducerStateEntry> entries_;
};

}  // namespace pp::test_broker
