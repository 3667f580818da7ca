#include "tests/broker/producer_state.h"

#include <algorithm>
#include <climits>

#include "proxy/records/record_batch_builder.h"

namespace pp::test_broker {

namespace {

// ProducerAppendInfo.inSequence: the next sequence, wrapping after INT32_MAX.
bool in_sequence(std::int32_t last_seq, std::int32_t next_seq) {
  return static_cast<std::int64_t>(next_seq) == static_cast<std::int64_t>(last_seq) + 1 ||
         (next_seq == 0 && last_seq == INT32_MAX);
}

}  // namespace

std::int32_t BatchMetadata::first_seq() const {
  // BatchMetadata.firstSeq: DefaultRecordBatch.decrementSequence(lastSeq, offsetDelta).
  if (last_seq < offset_delta) return INT32_MAX - (offset_delta - last_seq) + 1;
  return last_seq - offset_delta;
}

std::int32_t BatchProducerInfo::last_sequence() const {
  return pp::last_sequence(base_sequence, last_offset_delta);
}

const BatchMetadata* ProducerStateEntry::find_duplicate(std::int16_t batch_epoch, std::int32_t first_seq,
                                                        std::int32_t last_seq) const {
  // ProducerStateEntry.findDuplicateBatch: same epoch, and exactly the same
  // (first, last) range as a retained batch. Payload and CRC are not compared,
  // so a retry with different bytes but the same range is still a duplicate.
  if (batch_epoch != epoch) return nullptr;
  for (const auto& m : batches) {
    if (m.first_seq() == first_seq && m.last_seq == last_seq) return &m;
  }
  return nullptr;
}

SequenceVerdict ProducerStateManager::check(const BatchProducerInfo& batch, NoStateRule rule, bool ever_written) const {
  const std::int32_t first = batch.base_sequence;
  const std::int32_t last = batch.last_sequence();
  const ProducerStateEntry* entry = find(batch.producer_id);

  if (entry == nullptr || entry->epoch == kNoProducerEpoch) {
    // No state at all (docs/design/PIPELINE.md D.3): what a first sequence
    // other than 0 gets depends on the broker generation.
    if (first == 0) return SequenceVerdict::append();
    switch (rule) {
      case NoStateRule::kKafka0_11:
        return SequenceVerdict::reject(ErrorCode::kOutOfOrderSequenceNumber,
                                       "0.11: an unknown producer must start at sequence 0");
      case NoStateRule::kKafka1_0:
        return SequenceVerdict::reject(ErrorCode::kUnknownProducerId,
                                       "1.0-2.4: no state for this producer and sequence != 0");
      case NoStateRule::kKafka2_5:
        return SequenceVerdict::append();  // KIP-360: any first sequence without state
      case NoStateRule::kKafka4_5:
        if (ever_written) return SequenceVerdict::append();
        return SequenceVerdict::reject(ErrorCode::kOutOfOrderSequenceNumber,
                                       "4.5 (KAFKA-15591): a never-written partition needs sequence 0");
    }
  }

  // UnifiedLog.analyzeAndValidateProducerState looks for a duplicate first,
  // before any epoch or sequence check.
  if (const BatchMetadata* dup = entry->find_duplicate(batch.producer_epoch, first, last)) {
    return SequenceVerdict::duplicate(*dup);
  }
  // ProducerAppendInfo.checkProducerEpoch (INVALID_PRODUCER_EPOCH since 2.7).
  if (batch.producer_epoch < entry->epoch) {
    return SequenceVerdict::reject(ErrorCode::kInvalidProducerEpoch, "epoch older than the producer's");
  }
  if (batch.producer_epoch != entry->epoch) {
    // ProducerAppendInfo.checkSequence: "Invalid sequence number for new epoch".
    if (first != 0) {
      return SequenceVerdict::reject(ErrorCode::kOutOfOrderSequenceNumber, "a new epoch must start at sequence 0");
    }
    return SequenceVerdict::append();
  }
  if (rule == NoStateRule::kKafka0_11 && !entry->batches.empty() &&
      static_cast<std::int64_t>(last) <= entry->last_seq() && first <= entry->last_seq()) {
    // 0.11 kept only the last batch and called an older retry a duplicate
    // without being able to say where it went.
    return SequenceVerdict::reject(ErrorCode::kDuplicateSequenceNumber, "0.11: older than the last batch");
  }
  // Same epoch: the batch must follow the last retained one; with nothing
  // retained it must start at 0. This also rejects an old duplicate that fell
  // out of the window, which is why a client must never have more than
  // `retain` batches in flight (KAFKA-17926, KIP-1269).
  if (!in_sequence(entry->last_seq(), first)) {
    return SequenceVerdict::reject(ErrorCode::kOutOfOrderSequenceNumber, entry->batches.empty()
                                                                             ? "no batch retained: expected sequence 0"
                                                                             : "sequence gap or expired duplicate");
  }
  return SequenceVerdict::append();
}

void ProducerStateManager::on_append(const BatchProducerInfo& batch, std::int64_t last_offset) {
  ProducerStateEntry& entry = entries_[batch.producer_id];
  if (entry.epoch != batch.producer_epoch) {
    // ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch forgets the old
    // epoch's batches.
    entry.epoch = batch.producer_epoch;
    entry.batches.clear();
  }
  entry.batches.push_back(
      BatchMetadata{batch.last_sequence(), last_offset, batch.last_offset_delta, batch.max_timestamp});
  while (entry.batches.size() > static_cast<std::size_t>(std::max(retain_, 1))) {
    entry.batches.pop_front();
  }
  entry.last_timestamp = batch.max_timestamp;
}

void ProducerStateManager::reset(int retain) {
  retain_ = retain;
  entries_.clear();
}

const ProducerStateEntry* ProducerStateManager::find(std::int64_t producer_id) const {
  auto it = entries_.find(producer_id);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace pp::test_broker
