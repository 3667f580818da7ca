#include "daemon/client_state_restore.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "proxy/spool/spool_format.h"

namespace pp {
namespace {

using Snap = ClientProducersSnapshot;

spool::ClientBatchState to_spool(Snap::State state) {
  switch (state) {
    case Snap::State::kAcked:
      return spool::ClientBatchState::kAcked;
    case Snap::State::kFailed:
      return spool::ClientBatchState::kFailed;
    case Snap::State::kOutcomeUnknown:
      return spool::ClientBatchState::kOutcomeUnknown;
    case Snap::State::kPending:
      break;
  }
  return spool::ClientBatchState::kPending;
}

Snap::State from_spool(spool::ClientBatchState state) {
  switch (state) {
    case spool::ClientBatchState::kAcked:
      return Snap::State::kAcked;
    case spool::ClientBatchState::kFailed:
      return Snap::State::kFailed;
    case spool::ClientBatchState::kOutcomeUnknown:
      return Snap::State::kOutcomeUnknown;
    case spool::ClientBatchState::kPending:
      break;
  }
  return Snap::State::kPending;
}

spool::ClientBatchSnapshot to_spool(const Snap::Batch& b) {
  return spool::ClientBatchSnapshot{b.epoch,
                                    b.first_sequence,
                                    b.last_sequence,
                                    to_spool(b.state),
                                    static_cast<std::int16_t>(b.outcome.error),
                                    b.outcome.base_offset,
                                    b.outcome.log_append_time_ms,
                                    b.outcome.log_start_offset};
}

Snap::Batch from_spool(const spool::ClientBatchSnapshot& b) {
  Snap::Batch out{b.epoch, b.first_sequence, b.last_sequence, from_spool(b.state), {}};
  out.outcome.error = static_cast<ErrorCode>(b.error_code);
  out.outcome.base_offset = b.base_offset;
  out.outcome.log_append_time_ms = b.log_append_time_ms;
  out.outcome.log_start_offset = b.log_start_offset;
  out.outcome.maybe_written = b.state == spool::ClientBatchState::kOutcomeUnknown;
  return out;
}

DurableClientBatch durable(const std::string& topic, std::int32_t partition, std::int64_t producer_id,
                           std::int16_t epoch, std::int32_t base_sequence, std::int32_t record_count) {
  // A client's batch numbers its records consecutively: its last offset
  // delta is its record count less one.
  return DurableClientBatch{
      topic, partition,
      ClientBatch{producer_id, epoch, base_sequence, last_sequence_of(base_sequence, std::max(record_count, 1) - 1)}};
}

// The encoded sizes of kind 6's parts (docs/design/SPOOL.md, "Entries").
constexpr std::size_t kSnapshotHeadBytes = 12;  // next id, producer count
constexpr std::size_t kProducerBytes = 15;      // id, epoch, flags, partition count
constexpr std::size_t kPartitionBytes = 14;     // topic length, partition, epoch, last sequence, batch count
constexpr std::size_t kBatchBytes = 37;

std::size_t encoded_bytes(const Snap::Producer& p) {
  std::size_t bytes = kProducerBytes;
  for (const Snap::Partition& t : p.partitions)
    bytes += kPartitionBytes + t.topic.size() + kBatchBytes * t.batches.size();
  return bytes;
}

}  // namespace

spool::ClientProducersEntry to_spool_entry(const ClientProducersSnapshot& snapshot, std::size_t max_bytes) {
  spool::ClientProducersEntry out;
  out.next_producer_id = std::max<std::int64_t>(snapshot.next_producer_id, 0);
  out.producers.reserve(snapshot.producers.size());
  std::size_t bytes = spool::kEntryHeaderBytes + kSnapshotHeadBytes;
  for (const Snap::Producer& p : snapshot.producers) {
    bytes += encoded_bytes(p);
    if (bytes > max_bytes) {
      spdlog::info("spool: client producers snapshot over {} bytes: {} of {} producers left out", max_bytes,
                   snapshot.producers.size() - out.producers.size(), snapshot.producers.size());
      break;
    }
    spool::ClientProducerSnapshot& sp = out.producers.emplace_back();
    sp.producer_id = p.producer_id;
    sp.epoch = p.epoch;
    sp.bumped_by_request = p.bumped_by_request;
    for (const Snap::Partition& t : p.partitions) {
      spool::ClientPartitionSnapshot& st = sp.partitions.emplace_back();
      st.topic = t.topic;
      st.partition = t.partition;
      st.epoch = t.epoch;
      st.last_sequence = t.last_sequence;
      for (const Snap::Batch& b : t.batches) st.batches.push_back(to_spool(b));
    }
  }
  return out;
}

ClientProducersSnapshot from_spool_entry(const spool::ClientProducersEntry& entry) {
  Snap out;
  out.next_producer_id = entry.next_producer_id;
  out.producers.reserve(entry.producers.size());
  for (const spool::ClientProducerSnapshot& p : entry.producers) {
    Snap::Producer& sp = out.producers.emplace_back(Snap::Producer{p.producer_id, p.epoch, p.bumped_by_request, {}});
    for (const spool::ClientPartitionSnapshot& t : p.partitions) {
      Snap::Partition& st =
          sp.partitions.emplace_back(Snap::Partition{t.topic, t.partition, t.epoch, t.last_sequence, {}});
      for (const spool::ClientBatchSnapshot& b : t.batches) st.batches.push_back(from_spool(b));
    }
  }
  return out;
}

std::vector<DurableClientBatch> durable_client_batches(const spool::SpoolIndex& index) {
  const spool::EntryId snapshot_id = index.client_producers_id();
  std::vector<spool::ClientRecord> records = index.client_records();
  for (const spool::PendingRecords& r : index.unresolved_records()) {
    if (r.client_producer_id < 0 || r.id >= snapshot_id) continue;
    records.push_back(spool::ClientRecord{r.id, r.topic, r.partition, r.client_producer_id, r.client_producer_epoch,
                                          r.client_base_sequence, r.record_count});
  }
  std::sort(records.begin(), records.end(),
            [](const spool::ClientRecord& a, const spool::ClientRecord& b) { return a.id < b.id; });
  std::vector<DurableClientBatch> out;
  out.reserve(records.size());
  for (const spool::ClientRecord& r : records) {
    out.push_back(durable(r.topic, r.partition, r.producer_id, r.epoch, r.base_sequence, r.record_count));
  }
  return out;
}

std::size_t restore_client_state(const spool::SpoolIndex& index, ClientProducers& producers, std::uint64_t now_ms) {
  const Snap snapshot = index.client_producers() ? from_spool_entry(*index.client_producers()) : Snap{};
  producers.restore(snapshot, durable_client_batches(index), now_ms);
  return producers.producers();
}

void persist_client_state(spool::SpoolWriter& writer, const ClientProducers& producers) {
  writer.set_client_producers_source([&producers] { return to_spool_entry(producers.snapshot()); });
}

void keep_client_state(spool::SpoolWriter& writer, ClientProducers& producers, std::uint64_t now_ms) {
  const spool::SpoolIndex& index = writer.index();
  if (index.client_producers() || !index.client_records().empty()) {
    const std::size_t restored = restore_client_state(index, producers, now_ms);
    spdlog::info("spool: restored the dedup state of {} idempotent client producers (snapshot entry {})", restored,
                 index.client_producers_id());
  }
  persist_client_state(writer, producers);
}

}  // namespace pp
