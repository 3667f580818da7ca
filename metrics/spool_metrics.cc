#include "metrics/spool_metrics.h"

#include <algorithm>
#include <chrono>

namespace pp {
namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SpoolMetrics::SpoolMetrics(MetricFamilies& families)
    : bytes_(families.spool_bytes.Add({})),
      records_(families.spool_records.Add({})),
      oldest_age_(families.spool_oldest_record_age_seconds.Add({})),
      fsync_(families.spool_fsync_seconds.Add({}, MetricBuckets::spool_fsync_seconds())),
      replayed_(families.spool_replayed_batches_total.Add({})),
      corrupt_(families.spool_corrupt_bytes_total.Add({})) {}

void SpoolMetrics::on_fsync(double seconds, std::size_t /*appends*/) {
  fsync_.Observe(seconds);
}

void SpoolMetrics::on_usage(std::size_t bytes, std::int64_t records, std::optional<std::int64_t> oldest_ms) {
  bytes_.Set(static_cast<double>(bytes));
  records_.Set(static_cast<double>(records));
  oldest_ms_.store(oldest_ms.value_or(kNone), std::memory_order_relaxed);
  sample(wall_ms());
}

void SpoolMetrics::on_corrupt_bytes(std::size_t bytes) {
  corrupt_.Increment(static_cast<double>(bytes));
}

void SpoolMetrics::on_replayed_batches(std::int64_t batches) {
  replayed_.Increment(static_cast<double>(batches));
}

void SpoolMetrics::sample(std::int64_t now_ms) {
  const std::int64_t oldest = oldest_ms_.load(std::memory_order_relaxed);
  oldest_age_.Set(oldest == kNone ? 0.0 : static_cast<double>(std::max<std::int64_t>(0, now_ms - oldest)) / 1000.0);
}

}  // namespace pp
