#include "proxy/spool/spool_index.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace pp::spool {

void SpoolIndex::apply(const Entry& entry, const EntryLocation& location) {
  segments_[location.segment].bytes += location.size;
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, RecordsEntry>) {
          add_records(entry, body, location);
        } else if constexpr (std::is_same_v<T, IdentityEntry>) {
          identity_ = body;
        } else if constexpr (std::is_same_v<T, SequencedEntry>) {
          add_batch(entry, body, location);
        } else if constexpr (std::is_same_v<T, ResolvedEntry>) {
          resolve(body);
        } else if constexpr (std::is_same_v<T, ClusterViewEntry>) {
          cluster_view_ = body;
        } else {
          client_producers_ = body;
          client_producers_id_ = entry.id;
          client_records_.clear();
          client_record_keys_.clear();
        }
      },
      entry.body);
}

void SpoolIndex::add_segment_bytes(std::uint64_t segment, std::size_t bytes) {
  segments_[segment].bytes += bytes;
}

void SpoolIndex::add_records(const Entry& entry, const RecordsEntry& records, const EntryLocation& location) {
  RecordsState state;
  state.info = PendingRecords{entry.id,
                              entry.time_ms,
                              location,
                              records.topic,
                              records.partition,
                              records.acks,
                              records.client_producer_id,
                              records.client_producer_epoch,
                              records.client_base_sequence,
                              records.record_count,
                              0};
  records_.emplace(entry.id, std::move(state));
  ++segments_[location.segment].unresolved;
  unresolved_record_count_ += records.record_count;
  if (records.client_producer_id >= 0) add_client_record(entry, records);
}

void SpoolIndex::add_client_record(const Entry& entry, const RecordsEntry& records) {
  ClientKey key{records.client_producer_id, records.topic, records.partition};
  auto& kept = client_records_[key];
  kept.emplace(entry.id,
               ClientRecord{entry.id, records.topic, records.partition, records.client_producer_id,
                            records.client_producer_epoch, records.client_base_sequence, records.record_count});
  client_record_keys_.emplace(entry.id, std::move(key));
  if (kept.size() > kClientRecordsPerPartition) {
    client_record_keys_.erase(kept.begin()->first);
    kept.erase(kept.begin());
  }
}

void SpoolIndex::drop_client_record(EntryId id) {
  const auto key = client_record_keys_.find(id);
  if (key == client_record_keys_.end()) return;
  const auto kept = client_records_.find(key->second);
  if (kept != client_records_.end()) {
    kept->second.erase(id);
    if (kept->second.empty()) client_records_.erase(kept);
  }
  client_record_keys_.erase(key);
}

// A batch given up: the client records it carried are not delivered, so
// they are no longer what a client's retry is deduplicated against.
void SpoolIndex::fail_client_records(EntryId batch) {
  const auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  for (const RecordRange& range : it->second.pending.batch.ranges) drop_client_record(range.records);
}

std::vector<ClientRecord> SpoolIndex::client_records() const {
  std::vector<ClientRecord> out;
  out.reserve(client_record_keys_.size());
  for (const auto& [key, kept] : client_records_) {
    for (const auto& [id, record] : kept) out.push_back(record);
  }
  std::sort(out.begin(), out.end(), [](const ClientRecord& a, const ClientRecord& b) { return a.id < b.id; });
  return out;
}

void SpoolIndex::add_batch(const Entry& entry, const SequencedEntry& batch, const EntryLocation& location) {
  if (batch.supersedes != kNoEntry) drop_batch(batch.supersedes, /*resolved=*/false);
  for (const RecordRange& range : batch.ranges) {
    const auto it = records_.find(range.records);
    if (it == records_.end()) continue;
    it->second.live.push_back(Coverage{entry.id, range.first_record + range.record_count});
  }
  batches_.emplace(entry.id, BatchState{PendingBatch{entry.id, location.segment, entry.time_ms, batch}});
  ++segments_[location.segment].unresolved;
}

void SpoolIndex::resolve(const ResolvedEntry& resolved) {
  if (resolved.outcome == Outcome::kFailed) fail_client_records(resolved.target);
  if (resolved.outcome != Outcome::kAcknowledged) drop_client_record(resolved.target);
  if (batches_.contains(resolved.target)) {
    drop_batch(resolved.target, resolved.outcome != Outcome::kVoid);
    return;
  }
  const auto it = records_.find(resolved.target);
  if (it == records_.end()) return;
  // Records failed or voided before (the rest of) them were sequenced.
  it->second.failed_rest = true;
  maybe_finish_records(resolved.target);
}

void SpoolIndex::drop_batch(EntryId id, bool resolved) {
  const auto it = batches_.find(id);
  if (it == batches_.end()) return;
  const PendingBatch pending = std::move(it->second.pending);
  batches_.erase(it);
  release(pending.segment);
  for (const RecordRange& range : pending.batch.ranges) {
    const auto r = records_.find(range.records);
    if (r == records_.end()) continue;
    auto& live = r->second.live;
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Coverage& c) { return c.batch == id; }), live.end());
    if (resolved) {
      r->second.done += range.record_count;
      r->second.resolved_end = std::max(r->second.resolved_end, range.first_record + range.record_count);
      unresolved_record_count_ -= range.record_count;
    }
    maybe_finish_records(range.records);
  }
}

void SpoolIndex::maybe_finish_records(EntryId id) {
  const auto it = records_.find(id);
  if (it == records_.end()) return;
  const RecordsState& r = it->second;
  const bool all_done = r.done >= r.info.record_count;
  const bool rest_failed = r.failed_rest && r.live.empty();
  if (!all_done && !rest_failed) return;
  unresolved_record_count_ -= std::max(0, r.info.record_count - r.done);
  release(r.info.location.segment);
  records_.erase(it);
}

std::int32_t SpoolIndex::sequenced_end(const RecordsState& r) const {
  std::int32_t end = r.resolved_end;
  for (const Coverage& c : r.live) end = std::max(end, c.end);
  return end;
}

void SpoolIndex::release(std::uint64_t segment) {
  const auto it = segments_.find(segment);
  if (it != segments_.end() && it->second.unresolved > 0) --it->second.unresolved;
}

std::optional<PendingRecords> SpoolIndex::unsequenced_part(const RecordsState& r) const {
  if (r.failed_rest) return std::nullopt;
  const std::int32_t end = sequenced_end(r);
  if (end >= r.info.record_count) return std::nullopt;
  PendingRecords out = r.info;
  out.first_unsequenced = end;
  return out;
}

std::vector<PendingRecords> SpoolIndex::unsequenced_records() const {
  std::vector<PendingRecords> out;
  for (const auto& [id, r] : records_) {
    if (auto part = unsequenced_part(r)) out.push_back(std::move(*part));
  }
  return out;
}

std::vector<PendingRecords> SpoolIndex::unresolved_records() const {
  std::vector<PendingRecords> out;
  out.reserve(records_.size());
  for (const auto& [id, r] : records_) {
    out.push_back(r.info);
    out.back().first_unsequenced = sequenced_end(r);
  }
  return out;
}

std::vector<PendingBatch> SpoolIndex::unresolved_batches() const {
  std::vector<PendingBatch> out;
  out.reserve(batches_.size());
  for (const auto& [id, b] : batches_) out.push_back(b.pending);
  return out;
}

const PendingRecords* SpoolIndex::records(EntryId id) const {
  const auto it = records_.find(id);
  return it == records_.end() ? nullptr : &it->second.info;
}

std::optional<PendingRecords> SpoolIndex::next_unsequenced(EntryId from, EntryId through) const {
  for (auto it = records_.lower_bound(from); it != records_.end() && it->first <= through; ++it) {
    if (auto part = unsequenced_part(it->second)) return part;
  }
  return std::nullopt;
}

std::size_t SpoolIndex::count_unsequenced(EntryId from, EntryId through) const {
  std::size_t n = 0;
  for (auto it = records_.lower_bound(from); it != records_.end() && it->first <= through; ++it) {
    if (unsequenced_part(it->second)) ++n;
  }
  return n;
}

std::vector<std::uint64_t> SpoolIndex::take_deletable(std::uint64_t active) {
  std::vector<std::uint64_t> out;
  for (auto it = segments_.begin(); it != segments_.end() && it->first < active && it->second.unresolved == 0;) {
    out.push_back(it->first);
    it = segments_.erase(it);
  }
  return out;
}

std::size_t SpoolIndex::bytes() const {
  std::size_t total = 0;
  for (const auto& [id, s] : segments_) total += s.bytes;
  return total;
}

std::size_t SpoolIndex::segment_bytes(std::uint64_t segment) const {
  const auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.bytes;
}

std::size_t SpoolIndex::unresolved_in_segment(std::uint64_t segment) const {
  const auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.unresolved;
}

std::optional<std::int64_t> SpoolIndex::oldest_record_ms() const {
  if (records_.empty()) return std::nullopt;
  return records_.begin()->second.info.time_ms;
}

std::vector<std::uint64_t> SpoolIndex::segments() const {
  std::vector<std::uint64_t> out;
  out.reserve(segments_.size());
  for (const auto& [id, s] : segments_) out.push_back(id);
  return out;
}

}  // namespace pp::spool
