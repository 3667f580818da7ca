#include "proxy/frontend/client_producers.h"

#include <algorithm>
#include <limits>

namespace pp {
namespace {

constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// Kafka's coordinator hands out a new id once an epoch reaches
// Short.MaxValue - 1 (ProducerIdAndEpoch / TransactionMetadata.isEpochExhausted).
constexpr std::int16_t kLastBumpableEpoch = std::numeric_limits<std::int16_t>::max() - 2;
// Expired producers are looked for at most this often.
constexpr std::uint64_t kExpiryScanMs = 1000;

bool in_sequence(std::int32_t last, std::int32_t next) {
  return static_cast<std::int64_t>(next) == static_cast<std::int64_t>(last) + 1 || (next == 0 && last == kInt32Max);
}

// True when `first` lies ahead of last + 1 (a gap), sequences wrapping at
// INT32_MAX; a batch behind `last` is not ahead of it.
bool ahead_of_next(std::int32_t last, std::int32_t first) {
  constexpr std::int64_t kSpace = static_cast<std::int64_t>(kInt32Max) + 1;
  const std::int64_t distance = ((static_cast<std::int64_t>(first) - last - 1) % kSpace + kSpace) % kSpace;
  return distance > 0 && distance < kSpace / 2;
}

std::string describe(const ClientBatch& b) {
  return "producer " + std::to_string(b.producer_id) + " epoch " + std::to_string(b.epoch) + " sequences " +
         std::to_string(b.first_sequence) + ".." + std::to_string(b.last_sequence);
}

// A batch ahead of its turn because an earlier one failed upstream (not
// appended) and has not been retried yet. A broker would answer
// OUT_OF_ORDER_SEQUENCE_NUMBER; clients take that for lost records of their
// own (librdkafka bumps its epoch and renumbers what it has not seen
// acknowledged, records possibly in the log included; answered to its oldest
// batch in flight it is fatal). The gap here is the proxy's own failure, so
// the answer is the retriable "not appended" one: the client retries its
// batches in sequence order and the earlier one goes first.
ClientBatchOutcome behind_a_failure(const ClientBatch& b, std::int32_t last_sequence) {
  return ClientBatchOutcome{ErrorCode::kNotEnoughReplicas, -1, -1, -1,
                            describe(b) + ": not appended: the batch after sequence " + std::to_string(last_sequence) +
                                " failed upstream and is retried first"};
}

}  // namespace

std::int32_t last_sequence_of(std::int32_t base_sequence, std::int32_t last_offset_delta) {
  if (base_sequence > kInt32Max - last_offset_delta) {
    return static_cast<std::int32_t>(static_cast<std::int64_t>(base_sequence) + last_offset_delta - kInt32Max - 1);
  }
  return base_sequence + last_offset_delta;
}

ClientProducers::ClientProducers(ClientProducersConfig config)
    : config_(config), next_producer_id_(std::max<std::int64_t>(config.first_producer_id, 0)) {
  config_.batches_to_retain = std::max<std::size_t>(config_.batches_to_retain, 1);
  config_.max_producers = std::max<std::size_t>(config_.max_producers, 1);
}

void ClientProducers::maybe_expire(std::uint64_t now_ms) {
  if (now_ms < next_expiry_scan_ms_) return;
  next_expiry_scan_ms_ = now_ms + kExpiryScanMs;
  expire(now_ms);
}

void ClientProducers::expire(std::uint64_t now_ms) {
  const auto idle = static_cast<std::uint64_t>(std::max<std::int64_t>(config_.idle_timeout_ms, 0));
  std::erase_if(producers_, [&](const auto& entry) {
    const Producer& p = entry.second;
    const bool expired = p.in_flight == 0 && now_ms >= p.last_used_ms && now_ms - p.last_used_ms >= idle;
    if (expired) uncount(p);
    return expired;
  });
}

ClientProducers::Producer* ClientProducers::make_room_and_add(std::int64_t producer_id, std::int16_t epoch,
                                                              std::uint64_t now_ms) {
  if (producers_.size() >= config_.max_producers) {
    auto victim = producers_.end();
    for (auto it = producers_.begin(); it != producers_.end(); ++it) {
      if (it->second.in_flight != 0) continue;
      if (victim == producers_.end() || it->second.last_used_ms < victim->second.last_used_ms) victim = it;
    }
    if (victim == producers_.end()) return nullptr;  // every one has batches in flight
    uncount(victim->second);
    producers_.erase(victim);
  }
  Producer& p = producers_[producer_id];
  p.epoch = epoch;
  p.last_used_ms = now_ms;
  return &p;
}

InitProducerIdAnswer ClientProducers::fresh_id(std::uint64_t now_ms) {
  // Skip ids in use: a client from before a restart may still name one.
  while (producers_.contains(next_producer_id_)) {
    next_producer_id_ = next_producer_id_ == kInt64Max ? 0 : next_producer_id_ + 1;
  }
  const std::int64_t id = next_producer_id_;
  if (!make_room_and_add(id, 0, now_ms)) {
    return {ErrorCode::kCoordinatorLoadInProgress, -1, -1, false};  // retriable: clients ask again
  }
  next_producer_id_ = next_producer_id_ == kInt64Max ? 0 : next_producer_id_ + 1;
  return {ErrorCode::kNone, id, 0, false};
}

InitProducerIdAnswer ClientProducers::init_producer_id(std::int64_t producer_id, std::int16_t epoch,
                                                       std::uint64_t now_ms) {
  maybe_expire(now_ms);
  auto it = producer_id >= 0 && epoch >= 0 ? producers_.find(producer_id) : producers_.end();
  if (it == producers_.end()) return fresh_id(now_ms);
  Producer& p = it->second;
  p.last_used_ms = now_ms;
  if (epoch > p.epoch) p.epoch = epoch;  // the client bumped locally, as Java's does
  if (epoch == p.epoch) {
    if (p.epoch > kLastBumpableEpoch) return fresh_id(now_ms);
    ++p.epoch;
    p.bumped_by_request = true;
    return {ErrorCode::kNone, producer_id, p.epoch, true};
  }
  // The answer to an earlier bump was lost and the client asks again.
  if (p.bumped_by_request && epoch + 1 == p.epoch) return {ErrorCode::kNone, producer_id, p.epoch, true};
  return fresh_id(now_ms);
}

std::optional<BatchCheck> ClientProducers::find_duplicate(Producer& producer, PartitionState& state,
                                                          const PartitionKey& key, const ClientBatch& batch) {
  for (Retained& r : state.batches) {
    if (r.epoch != batch.epoch || r.first_sequence != batch.first_sequence || r.last_sequence != batch.last_sequence) {
      continue;
    }
    switch (r.state) {
      case BatchState::kAcked:
        return BatchCheck{BatchVerdict::kDuplicateAcked, 0, r.outcome};
      case BatchState::kInFlight:
        return BatchCheck{BatchVerdict::kDuplicateInFlight, r.handle, {}};
      case BatchState::kOutcomeUnknown: {
        ClientBatchOutcome again = r.outcome;
        again.error_message = describe(batch) + ": failed upstream with its outcome unknown (" +
                              r.outcome.error_message + "); not sent again, since it may be in the log";
        return BatchCheck{BatchVerdict::kReject, 0, std::move(again)};
      }
      case BatchState::kFailed: {
        // After a rewind (complete()) the failed batches go again in
        // sequence order; one ahead of its turn is a gap, as on a broker.
        if (r.epoch == state.epoch && ahead_of_next(state.last_sequence, r.first_sequence)) {
          return BatchCheck{BatchVerdict::kReject, 0, behind_a_failure(batch, state.last_sequence)};
        }
        if (r.epoch == state.epoch && in_sequence(state.last_sequence, r.first_sequence)) {
          state.last_sequence = r.last_sequence;
        }
        r.state = BatchState::kInFlight;
        r.handle = next_handle_++;
        in_flight_[r.handle] = InFlight{batch.producer_id, key, {}};
        ++producer.in_flight;
        return BatchCheck{BatchVerdict::kAppend, r.handle, {}};
      }
    }
  }
  return std::nullopt;
}

std::optional<ErrorCode> ClientProducers::sequence_error(const PartitionState& state, const ClientBatch& batch,
                                                         std::string& message) const {
  if (state.epoch < 0) return std::nullopt;  // no state: any sequence
  if (batch.epoch < state.epoch) {
    message = describe(batch) + ": the partition has seen epoch " + std::to_string(state.epoch);
    return ErrorCode::kInvalidProducerEpoch;
  }
  if (batch.epoch > state.epoch) {
    if (batch.first_sequence == 0) return std::nullopt;
    message = describe(batch) + ": a new epoch must start at sequence 0";
    return ErrorCode::kOutOfOrderSequenceNumber;
  }
  if (in_sequence(state.last_sequence, batch.first_sequence)) return std::nullopt;
  if (ahead_of_next(state.last_sequence, batch.first_sequence) && failed_next(state)) {
    ClientBatchOutcome refused = behind_a_failure(batch, state.last_sequence);
    message = std::move(refused.error_message);
    return refused.error;
  }
  message = describe(batch) + ": expected first sequence after " + std::to_string(state.last_sequence);
  return ErrorCode::kOutOfOrderSequenceNumber;
}

// The batch that would follow the partition's last sequence is retained as
// failed upstream: the sequence was rewound to before it.
bool ClientProducers::failed_next(const PartitionState& state) {
  return std::any_of(state.batches.begin(), state.batches.end(), [&](const Retained& r) {
    return r.state == BatchState::kFailed && r.epoch == state.epoch &&
           in_sequence(state.last_sequence, r.first_sequence);
  });
}

// A failed batch is not in the log, so when nothing after it was
// acknowledged or is still in flight, the partition's sequence goes back to
// just before the first failed one: a later batch is then refused as a gap
// (OUT_OF_ORDER_SEQUENCE_NUMBER), as a broker would, instead of reaching the
// log ahead of the failed one's retry (CLIENT_DEDUP.md, the same-epoch rule).
void ClientProducers::rewind_to_failed_tail(PartitionState& state) {
  auto first_failed = state.batches.end();
  for (auto it = state.batches.end(); it != state.batches.begin();) {
    --it;
    if (it->state != BatchState::kFailed || it->epoch != state.epoch) break;
    first_failed = it;
  }
  if (first_failed == state.batches.end()) return;
  state.last_sequence = first_failed->first_sequence == 0 ? -1 : first_failed->first_sequence - 1;
}

void ClientProducers::trim(PartitionState& state) {
  const std::size_t before = state.batches.size();
  auto it = state.batches.begin();
  while (state.batches.size() > config_.batches_to_retain && it != state.batches.end()) {
    it = it->state == BatchState::kInFlight ? std::next(it) : state.batches.erase(it);
  }
  retained_batches_ -= before - state.batches.size();
}

void ClientProducers::uncount(const Producer& producer) {
  partition_states_ -= producer.partitions.size();
  for (const auto& [key, state] : producer.partitions) retained_batches_ -= state.batches.size();
}

// Estimates of the heap each entry takes (node, key, the struct itself):
// what the memory budget is charged, not a measurement.
std::size_t ClientProducers::memory_bytes() const {
  constexpr std::size_t kPerProducer = 160;
  constexpr std::size_t kPerPartition = 192;  // map node, topic name, deque blocks
  constexpr std::size_t kPerBatch = sizeof(Retained) + 16;
  constexpr std::size_t kPerInFlight = 128;
  return producers_.size() * kPerProducer + partition_states_ * kPerPartition + retained_batches_ * kPerBatch +
         in_flight_.size() * kPerInFlight;
}

BatchCheck ClientProducers::append(Producer& producer, PartitionState& state, const PartitionKey& key,
                                   const ClientBatch& batch) {
  if (batch.epoch != state.epoch) {
    // A new epoch: what was retained of older ones can never match again;
    // batches still in flight stay until they complete.
    retained_batches_ -=
        std::erase_if(state.batches, [](const Retained& r) { return r.state != BatchState::kInFlight; });
    state.epoch = batch.epoch;
  }
  state.last_sequence = batch.last_sequence;
  Retained& r = state.batches.emplace_back();
  ++retained_batches_;
  r.epoch = batch.epoch;
  r.first_sequence = batch.first_sequence;
  r.last_sequence = batch.last_sequence;
  r.handle = next_handle_++;
  in_flight_[r.handle] = InFlight{batch.producer_id, key, {}};
  ++producer.in_flight;
  const std::uint64_t handle = r.handle;
  trim(state);
  return BatchCheck{BatchVerdict::kAppend, handle, {}};
}

BatchCheck ClientProducers::check(const std::string& topic, std::int32_t partition, const ClientBatch& batch,
                                  std::uint64_t now_ms) {
  maybe_expire(now_ms);
  auto it = producers_.find(batch.producer_id);
  Producer* producer = it == producers_.end() ? nullptr : &it->second;
  if (!producer) producer = make_room_and_add(batch.producer_id, batch.epoch, now_ms);
  if (!producer) {
    ClientBatchOutcome o{ErrorCode::kNotEnoughReplicas, -1, -1, -1, "too many client producers with batches in flight"};
    return BatchCheck{BatchVerdict::kReject, 0, std::move(o)};
  }
  producer->last_used_ms = now_ms;
  producer->epoch = std::max(producer->epoch, batch.epoch);
  PartitionKey key{topic, partition};
  auto [entry, inserted] = producer->partitions.try_emplace(key);
  if (inserted) ++partition_states_;
  PartitionState& state = entry->second;
  if (auto duplicate = find_duplicate(*producer, state, key, batch)) return std::move(*duplicate);
  std::string message;
  if (auto error = sequence_error(state, batch, message)) {
    return BatchCheck{BatchVerdict::kReject, 0, ClientBatchOutcome{*error, -1, -1, -1, std::move(message)}};
  }
  return append(*producer, state, key, batch);
}

void ClientProducers::attach(std::uint64_t handle, BatchWaiter waiter) {
  auto it = in_flight_.find(handle);
  if (it != in_flight_.end()) it->second.waiters.push_back(std::move(waiter));
}

std::vector<BatchWaiter> ClientProducers::complete(std::uint64_t handle, const ClientBatchOutcome& outcome) {
  auto it = in_flight_.find(handle);
  if (it == in_flight_.end()) return {};
  InFlight done = std::move(it->second);
  in_flight_.erase(it);
  auto producer = producers_.find(done.producer_id);
  if (producer == producers_.end()) return std::move(done.waiters);
  Producer& p = producer->second;
  if (p.in_flight > 0) --p.in_flight;
  auto state = p.partitions.find(done.partition);
  if (state == p.partitions.end()) return std::move(done.waiters);
  for (Retained& r : state->second.batches) {
    if (r.handle != handle || r.state != BatchState::kInFlight) continue;
    if (outcome.error == ErrorCode::kNone) {
      r.state = BatchState::kAcked;
    } else {
      r.state = outcome.maybe_written ? BatchState::kOutcomeUnknown : BatchState::kFailed;
    }
    r.outcome = outcome;
    break;
  }
  // A batch that may be in the log stops the rewind: what follows it must
  // stay after it.
  if (outcome.error != ErrorCode::kNone && !outcome.maybe_written) rewind_to_failed_tail(state->second);
  trim(state->second);
  return std::move(done.waiters);
}

ClientProducersSnapshot ClientProducers::snapshot() const {
  using Snap = ClientProducersSnapshot;
  Snap out;
  out.next_producer_id = next_producer_id_;
  out.producers.reserve(producers_.size());
  for (const auto& [id, p] : producers_) {
    Snap::Producer& sp = out.producers.emplace_back(Snap::Producer{id, p.epoch, p.bumped_by_request, {}});
    for (const auto& [key, state] : p.partitions) {
      if (state.epoch < 0) continue;  // no state: nothing to restore
      Snap::Partition& part =
          sp.partitions.emplace_back(Snap::Partition{key.first, key.second, state.epoch, state.last_sequence, {}});
      for (const Retained& r : state.batches) {
        Snap::Batch b{r.epoch, r.first_sequence, r.last_sequence, Snap::State::kPending, {}};
        if (r.state != BatchState::kInFlight) {
          b.state = r.state == BatchState::kAcked    ? Snap::State::kAcked
                    : r.state == BatchState::kFailed ? Snap::State::kFailed
                                                     : Snap::State::kOutcomeUnknown;
          b.outcome = r.outcome;
          b.outcome.error_message.clear();
        }
        part.batches.push_back(std::move(b));
      }
    }
  }
  std::sort(out.producers.begin(), out.producers.end(),
            [](const Snap::Producer& a, const Snap::Producer& b) { return a.producer_id < b.producer_id; });
  return out;
}

void ClientProducers::restore(const ClientProducersSnapshot& snapshot, const std::vector<DurableClientBatch>& durable,
                              std::uint64_t now_ms) {
  if (snapshot.next_producer_id >= 0) {
    // Past every id the previous process may have handed out since it took
    // the snapshot (63 bits, wrapping to 0 as fresh_id does).
    next_producer_id_ = static_cast<std::int64_t>(
        (static_cast<std::uint64_t>(snapshot.next_producer_id) + static_cast<std::uint64_t>(kRestartIdStride)) &
        static_cast<std::uint64_t>(kInt64Max));
  }
  for (const ClientProducersSnapshot::Producer& p : snapshot.producers) restore_producer(p, now_ms);
  for (const DurableClientBatch& d : durable) replay(d, now_ms);
  settle_pending();
}

// Pending batches are held as in flight without a handle until
// settle_pending(): restore() runs before anything is in flight.
void ClientProducers::restore_producer(const ClientProducersSnapshot::Producer& snapshot, std::uint64_t now_ms) {
  using Snap = ClientProducersSnapshot;
  if (snapshot.producer_id < 0 || producers_.contains(snapshot.producer_id)) return;
  Producer* p = make_room_and_add(snapshot.producer_id, snapshot.epoch, now_ms);
  if (p == nullptr) return;
  p->bumped_by_request = snapshot.bumped_by_request;
  for (const Snap::Partition& part : snapshot.partitions) {
    auto [entry, inserted] = p->partitions.try_emplace(PartitionKey{part.topic, part.partition});
    if (!inserted) continue;
    ++partition_states_;
    PartitionState& state = entry->second;
    state.epoch = part.epoch;
    state.last_sequence = part.last_sequence;
    for (const Snap::Batch& b : part.batches) {
      Retained& r = state.batches.emplace_back();
      ++retained_batches_;
      r.epoch = b.epoch;
      r.first_sequence = b.first_sequence;
      r.last_sequence = b.last_sequence;
      r.outcome = b.outcome;
      r.state = b.state == Snap::State::kAcked            ? BatchState::kAcked
                : b.state == Snap::State::kFailed         ? BatchState::kFailed
                : b.state == Snap::State::kOutcomeUnknown ? BatchState::kOutcomeUnknown
                                                          : BatchState::kInFlight;
    }
    trim(state);
  }
}

// One durable client batch: acknowledged (its records are in the spool and
// will be delivered), unless it is stale (an older epoch, or a sequence
// behind the partition's last), which the state already covers.
void ClientProducers::replay(const DurableClientBatch& durable, std::uint64_t now_ms) {
  const ClientBatch& b = durable.batch;
  if (b.producer_id < 0 || b.epoch < 0 || b.first_sequence < 0) return;
  auto it = producers_.find(b.producer_id);
  Producer* p = it == producers_.end() ? make_room_and_add(b.producer_id, b.epoch, now_ms) : &it->second;
  if (p == nullptr) return;
  p->epoch = std::max(p->epoch, b.epoch);
  auto [entry, inserted] = p->partitions.try_emplace(PartitionKey{durable.topic, durable.partition});
  if (inserted) ++partition_states_;
  PartitionState& state = entry->second;
  const ClientBatchOutcome acked{ErrorCode::kNone, -1, -1, -1, {}};
  for (Retained& r : state.batches) {
    if (r.epoch != b.epoch || r.first_sequence != b.first_sequence || r.last_sequence != b.last_sequence) continue;
    if (r.state != BatchState::kAcked) {
      // A failed batch rewound the sequence to before it; its retry was spooled.
      if (r.epoch == state.epoch && (in_sequence(state.last_sequence, r.first_sequence) ||
                                     ahead_of_next(state.last_sequence, r.first_sequence))) {
        state.last_sequence = r.last_sequence;
      }
      r.state = BatchState::kAcked;
      r.outcome = acked;
    }
    return;
  }
  if (state.epoch >= 0 &&
      (b.epoch < state.epoch || (b.epoch == state.epoch && !in_sequence(state.last_sequence, b.first_sequence) &&
                                 !ahead_of_next(state.last_sequence, b.first_sequence)))) {
    return;
  }
  if (b.epoch != state.epoch) {
    retained_batches_ -=
        std::erase_if(state.batches, [](const Retained& r) { return r.state != BatchState::kInFlight; });
    state.epoch = b.epoch;
  }
  state.last_sequence = b.last_sequence;
  Retained& r = state.batches.emplace_back();
  ++retained_batches_;
  r.epoch = b.epoch;
  r.first_sequence = b.first_sequence;
  r.last_sequence = b.last_sequence;
  r.state = BatchState::kAcked;
  r.outcome = acked;
  trim(state);
}

// A batch in flight at the snapshot whose records no durable entry holds:
// it may have been delivered and its entry deleted since, or never been
// durable. Its retry is answered a failure, never appended again.
void ClientProducers::settle_pending() {
  for (auto& [id, p] : producers_) {
    for (auto& [key, state] : p.partitions) {
      for (Retained& r : state.batches) {
        if (r.state != BatchState::kInFlight || r.handle != 0) continue;
        r.state = BatchState::kOutcomeUnknown;
        r.outcome = ClientBatchOutcome{ErrorCode::kRequestTimedOut,        -1,    -1,  -1,
                                       "in flight when the proxy stopped", false, true};
      }
      trim(state);
    }
  }
}

}  // namespace pp
