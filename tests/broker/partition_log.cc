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
  batches_.push_back(std::move(meta));
  ever_written_ = true;
  return base;
}

void PartitionLog::truncate_last_batches(std::size_t count) {
  count = std::min(count, batches_.size());
  if (count == 0) return;
  const AppendedBatch& first_dropped = batches_[batches_.size() - count];
  records_.resize(first_dropped.first_record);
  next_offset_ = first_dropped.base_offset;
  batches_.resize(batches_.size() - count);
}

Bytes PartitionLog::read(std::int64_t offset, std::size_t max_bytes) const {
  Bytes out;
  auto it = std::lower_bound(batches_.begin(), batches_.end(), offset,
                             [](const AppendedBatch& b, std::int64_t o) { return b.last_offset() < o; });
  for (; it != batches_.end(); ++it) {
    if (!out.empty() && out.size() + it->bytes.size() > max_bytes) break;
    out.insert(out.end(), it->bytes.begin(), it->bytes.end());
  }
  return out;
}

std::optional<PartitionLog::OffsetAndTimestamp> PartitionLog::offset_for_timestamp(std::int64_t timestamp) const {
  for (const auto& r : records_) {
    if (r.timestamp >= timestamp) return OffsetAndTimestamp{r.offset, r.timestamp};
  }
  return std::nullopt;
}

std::optional<PartitionLog::OffsetAndTimestamp> PartitionLog::max_timestamp_offset() const {
  std::optional<OffsetAndTimestamp> best;
  for (const auto& r : records_) {
    if (!best || r.timestamp > best->timestamp) best = OffsetAndTimestamp{r.offset, r.timestamp};
  }
  return best;
}

}  // namespace pp::test_broker
