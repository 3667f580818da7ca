// The spool's facts as metrics: spool::SpoolObserver over the spool_*
// families of MetricFamilies (docs/design/INTERFACES.md, "Metrics"). The
// spool calls it on the loop thread that owns its writer (or the thread
// running recovery, before the loop serves), per commit or per event.
// The oldest record's age grows while nothing happens, so it is computed
// from the oldest record's time whenever the usage changes and at every
// sample().
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "metrics/metric_families.h"
#include "proxy/spool/spool_observer.h"

namespace pp {

class SpoolMetrics final : public spool::SpoolObserver {
 public:
  explicit SpoolMetrics(MetricFamilies& families);

  void on_fsync(double seconds, std::size_t appends) override;
  void on_usage(std::size_t bytes, std::int64_t records, std::optional<std::int64_t> oldest_ms) override;
  void on_corrupt_bytes(std::size_t bytes) override;
  void on_replayed_batches(std::int64_t batches) override;

  // Refreshes spool_oldest_record_age_seconds against the wall clock
  // `now_ms` (0 while the spool holds no record). Any thread.
  void sample(std::int64_t now_ms);

 private:
  prometheus::Gauge& bytes_;
  prometheus::Gauge& records_;
  prometheus::Gauge& oldest_age_;
  prometheus::Histogram& fsync_;
  prometheus::Counter& replayed_;
  prometheus::Counter& corrupt_;
  static constexpr std::int64_t kNone = INT64_MIN;
  std::atomic<std::int64_t> oldest_ms_{kNone};
};

}  // namespace pp
