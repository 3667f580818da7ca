// ClusterViewKeeper over a real SpoolWriter in a temporary directory: a
// changed view is appended and recovered by the next start, an unchanged one
// is not appended again, and a segment's checkpoint carries the last view.
#include "proxy/durable/cluster_view_keeper.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <filesystem>

#include "tests/unit/spool/spool_test_support.h"

namespace pp::durable {
namespace {

using spool::testing::TempDir;
using spool::testing::WriterHarness;

// Turns the loop until the keeper's view is durable (bounded).
void settle(WriterHarness& h, const ClusterViewKeeper& keeper) {
  for (int spins = 0; spins < 100000 && !keeper.durable(); ++spins) uv_run(h.loop(), UV_RUN_ONCE);
}

ClusterView recovered_view(const std::string& dir) {
  auto recovered = spool::SpoolRecovery(dir, spool::SpoolRecovery::Mode::kReadOnly).run();
  EXPECT_TRUE(recovered) << recovered.error();
  if (!recovered || !recovered->index.cluster_view()) return {};
  ClusterView view;
  for (const auto& t : recovered->index.cluster_view()->topics) view[t.topic] = t.partitions;
  return view;
}

TEST(ClusterViewKeeper, AChangedViewIsAppendedAndRecoveredByTheNextStart) {
  TempDir dir;
  {
    WriterHarness h(dir.path());
    ASSERT_TRUE(h.ok());
    ClusterViewKeeper keeper(h.writer());
    EXPECT_TRUE(keeper.view().empty());
    keeper.offer({{"orders", 3}, {"audit", 1}, {"empty", 0}});
    settle(h, keeper);
    EXPECT_TRUE(keeper.durable());
    EXPECT_EQ(keeper.appends(), 1U);
    EXPECT_EQ(keeper.view(), (ClusterView{{"orders", 3}, {"audit", 1}}));

    // The same view again: nothing appended.
    keeper.offer({{"audit", 1}, {"orders", 3}});
    EXPECT_EQ(keeper.appends(), 1U);
    // A partition added: appended.
    keeper.offer({{"audit", 1}, {"orders", 4}});
    settle(h, keeper);
    EXPECT_EQ(keeper.appends(), 2U);
  }
  EXPECT_EQ(recovered_view(dir.path()), (ClusterView{{"orders", 4}, {"audit", 1}}));

  // The next process starts from it, and a topic forgotten is dropped.
  WriterHarness h(dir.path());
  ASSERT_TRUE(h.ok());
  ClusterViewKeeper keeper(h.writer());
  EXPECT_EQ(keeper.view(), (ClusterView{{"orders", 4}, {"audit", 1}}));
  keeper.offer({{"orders", 4}});
  settle(h, keeper);
  h.close();
  EXPECT_EQ(recovered_view(dir.path()), (ClusterView{{"orders", 4}}));
}

TEST(ClusterViewKeeper, EverySegmentStartsWithTheLastViewSoDeletingOldOnesKeepsIt) {
  TempDir dir;
  spool::SpoolWriterConfig config;
  config.segment_bytes = 64 * 1024;
  config.max_bytes = 1 << 20;
  {
    WriterHarness h(dir.path(), config);
    ASSERT_TRUE(h.ok());
    ClusterViewKeeper keeper(h.writer());
    keeper.offer({{"orders", 3}});
    settle(h, keeper);
    // Records that fill a few segments, each acknowledged: the old segments go.
    const Bytes batch = spool::testing::make_batch(1, 30 * 1024);
    for (int i = 0; i < 6; ++i) {
      const std::size_t appended = h.append(spool::testing::records_entry(batch, 1, "orders"));
      h.run();
      ASSERT_EQ(h.result(appended).status, 0);
      spool::ResolvedEntry resolved;
      resolved.target = h.result(appended).id;
      resolved.outcome = spool::Outcome::kFailed;
      h.append(resolved);
      h.run();
    }
    EXPECT_GT(h.writer().active_segment(), 2U);
  }
  // The segment the view was appended to is gone; the checkpoints kept it.
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/00000000000000000001.seg"));
  EXPECT_EQ(recovered_view(dir.path()), (ClusterView{{"orders", 3}}));
}

}  // namespace
}  // namespace pp::durable
