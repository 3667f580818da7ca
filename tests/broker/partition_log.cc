#include "tests/broker/partition_log.h"

#include <algorithm>

#include "proxy/protocol/wire_writer.h"
#include "proxy/records/record_batch.h"

namespace pp::test_broker {

std::int64_t PartitionLog::append(ByteView batch_bytes, AppendedBatch meta, std::vector<AppendedRecord> records) {
  namespace layout = record_batch_layout;
  const std::int64_t base = next_offset_;
  meta.base_offset = base;
  meta.first_record = records_.size();
  meta.bytes.assign(batch_bytes.begin(), batch_bytes.end());
  // LogValidator assigns offsets in place; PartitionLeaderEpoch is set by the
  // leader (Partition.appendRecordsToLeader). Neither is under the CRC.
  WireWriter::put_be(meta.bytes.data() + layout::kBaseOffset, base);
  WireWriter::put_be(meta.bytes.data() + layout::kPartitionLeaderEpoch, meta.leader_epoch);
  for (auto& r : records) {
    r.leader = meta.leader;
    r.leader_epoch = meta.leader_epoch;
    records_.push_back(std::move(r));
  }
  next_offset_ = base + meta.last_offset_delta + 1;
  stored_bytes_ += meta.bytes.size();
  batches_.push_back(std::move(meta));
  ever_written_ = true;
  release_oldest_over_bound();
  return base;
}

void PartitionLog::release_oldest_over_bound() {
  if (retention_bytes_ == 0) return;
  // Stops at the newest batch, so a batch larger than the bound still serves.
  while (stored_bytes_ > retention_bytes_ && first_retained_batch_ + 1 < batches_.size()) {
    AppendedBatch& oldest = batches_[first_retained_batch_];
    stored_bytes_ -= oldest.bytes.size();
    Bytes().swap(oldest.bytes);  // swap, not clear: clear keeps the capacity
    const std::size_t records_end = batches_[first_retained_batch_ + 1].first_record;
    for (std::size_t i = oldest.first_record; i < records_end; ++i) {
      records_[i].key.reset();
      records_[i].value.reset();
    }
    ++first_retained_batch_;
  }
  log_start_offset_ = batches_[first_retained_batch_].base_offset;
}

void PartitionLog::truncate_last_batches(std::size_t count) {
  count = std::min(count, batches_.size());
  if (count == 0) return;
  const std::size_t kept = batches_.size() - count;
  for (std::size_t i = kept; i < batches_.size(); ++i) stored_bytes_ -= batches_[i].bytes.size();
  const AppendedBatch& first_dropped = batches_[kept];
  records_.resize(first_dropped.first_record);
  next_offset_ = first_dropped.base_offset;
  batches_.resize(kept);
  if (first_retained_batch_ > kept) {
    // Every retained batch is gone: the log is empty from its new end on.
    first_retained_batch_ = kept;
    log_start_offset_ = next_offset_;
  }
}

std::span<const AppendedRecord> PartitionLog::retained_records() const {
  const std::size_t first =
      first_retained_batch_ < batches_.size() ? batches_[first_retained_batch_].first_record : records_.size();
  return std::span<const AppendedRecord>(records_).subspan(first);
}

Bytes PartitionLog::read(std::int64_t offset, std::size_t max_bytes) const {
  Bytes out;
  const auto retained_begin = batches_.begin() + static_cast<std::ptrdiff_t>(first_retained_batch_);
  auto it = std::lower_bound(retained_begin, batches_.end(), offset,
                             [](const AppendedBatch& b, std::int64_t o) { return b.last_offset() < o; });
  for (; it != batches_.end(); ++it) {
    if (!out.empty() && out.size() + it->bytes.size() > max_bytes) break;
    out.insert(out.end(), it->bytes.begin(), it->bytes.end());
  }
  return out;
}

std::optional<PartitionLog::OffsetAndTimestamp> PartitionLog::offset_for_timestamp(std::int64_t timestamp) const {
  for (const auto& r : retained_records()) {
    if (r.timestamp >= timestamp) return OffsetAndTimestamp{r.offset, r.timestamp};
  }
  return std::nullopt;
}

std::optional<PartitionLog::OffsetAndTimestamp> PartitionLog::max_timestamp_offset() const {
  std::optional<OffsetAndTimestamp> best;
  for (const auto& r : retained_records()) {
    if (!best || r.timestamp > best->timestamp) best = OffsetAndTimestamp{r.offset, r.timestamp};
  }
  return best;
}

}  // namespace pp::test_broker
