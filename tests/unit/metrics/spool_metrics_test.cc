// The spool_* families fed by a real spool: a writer on a real loop and
// real files reports its commits, its usage and the oldest record's age
// through Metrics' SpoolObserver, and recovery's damage is counted.
#include "metrics/spool_metrics.h"

#include <gtest/gtest.h>

#include "metrics/metrics.h"
#include "tests/unit/metrics/collected.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp {
namespace {

using testing::value_of;

TEST(SpoolMetrics, AWritersCommitsAndUsageReachTheFamilies) {
  Metrics m(MetricsConfig{});
  spool::testing::TempDir dir;
  {
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto recovered = spool::SpoolRecovery(dir.path(), spool::SpoolRecovery::Mode::kRepair).run();
    ASSERT_TRUE(recovered);
    {
      spool::SpoolWriter writer(&loop, spool::SpoolWriterConfig{}, std::move(*recovered), &m.spool_observer());
      const Bytes batch = spool::testing::make_batch(5);
      int done = 0;
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(writer.append(spool::testing::records_entry(batch, 5), [&](int, spool::EntryId) { ++done; }));
      }
      for (int spins = 0; spins < 10000 && done < 3; ++spins) uv_run(&loop, UV_RUN_ONCE);
      ASSERT_EQ(done, 3);
      bool closed = false;
      writer.close([&] { closed = true; });
      for (int spins = 0; spins < 10000 && !closed; ++spins) uv_run(&loop, UV_RUN_ONCE);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, "produce_proxy_spool_records"), 15);
  EXPECT_GT(value_of(r, "produce_proxy_spool_bytes").value_or(0), 3 * 5 * 16);
  EXPECT_EQ(value_of(r, "produce_proxy_spool_fsync_seconds"), 1) << "one group commit for the three appends";
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  m.spool_observer().sample(now + 60000);
  EXPECT_GE(value_of(r, "produce_proxy_spool_oldest_record_age_seconds").value_or(0), 59.0);
  m.spool_observer().on_corrupt_bytes(17);
  m.spool_observer().on_replayed_batches(2);
  EXPECT_EQ(value_of(r, "produce_proxy_spool_corrupt_bytes_total"), 17);
  EXPECT_EQ(value_of(r, "produce_proxy_spool_replayed_batches_total"), 2);
}

}  // namespace
}  // namespace pp
