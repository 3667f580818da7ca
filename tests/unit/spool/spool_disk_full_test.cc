// A full disk: a small tmpfs mounted for the test (the test command runs as
// root) and filled up. Appends fail with a retriable ENOSPC, only those whose
// commit hit the full disk; the writer keeps running, accepts again once space
// returns, and recovery yields exactly the appends that were acknowledged.
// With the reserve on, records stop short of a full disk and a drained spool
// frees it.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include "tests/unit/spool/spool_test_support.h"

namespace pp::spool {
namespace {

using testing::make_batch;
using testing::records_entry;
using testing::TempDir;
using testing::WriterHarness;

class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& at) : at_(at) {
    mounted_ = ::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=256k") == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string at_;
  bool mounted_ = false;
  std::string error_;
};

// Fills the file system with one file until the kernel says it is full.
void fill(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string chunk(4096, 'x');
  for (int i = 0; i < 1024 && out; ++i) out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

TEST(SpoolDiskFull, AppendsFailRetriablyWhileFullAndSucceedOnceSpaceReturns) {
  TempDir mount_point;
  SmallTmpfs fs(mount_point.path());
  if (!fs.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here (" << fs.error() << "); run as root";
  const std::string dir = mount_point.path() + "/spool";
  const std::string filler = mount_point.path() + "/filler";
  const Bytes batch = make_batch(4, 2000);
  std::set<EntryId> acknowledged;
  std::size_t failed = 0;
  {
    SpoolWriterConfig config;
    config.segment_bytes = 64 * 1024;
    config.disk_reserve_bytes = 0;  // what the disk itself refuses, not the reserve
    WriterHarness h(dir, config);
    ASSERT_TRUE(h.ok());
    const auto before = h.append(records_entry(batch, 4));
    h.run();
    ASSERT_EQ(h.result(before).status, 0);
    acknowledged.insert(h.result(before).id);

    fill(filler);
    for (int i = 0; i < 20; ++i) {
      const auto r = h.append(records_entry(batch, 4));
      h.run();
      ASSERT_FALSE(h.result(r).refused);
      if (h.result(r).status == 0) {
        acknowledged.insert(h.result(r).id);
      } else {
        EXPECT_EQ(h.result(r).status, UV_ENOSPC);
        ++failed;
      }
    }
    EXPECT_GE(failed, 15U) << "the disk was full for these appends";

    std::remove(filler.c_str());
    for (int i = 0; i < 5; ++i) {
      const auto r = h.append(records_entry(batch, 4));
      h.run();
      ASSERT_EQ(h.result(r).status, 0) << "accepted again once space returned";
      acknowledged.insert(h.result(r).id);
    }
  }
  const auto recovered = SpoolRecovery(dir, SpoolRecovery::Mode::kRepair).run();
  ASSERT_TRUE(recovered) << recovered.error();
  std::set<EntryId> owed;
  for (const PendingRecords& r : recovered->index.unresolved_records()) owed.insert(r.id);
  EXPECT_EQ(owed, acknowledged);
  EXPECT_EQ(recovered->report.torn_bytes, 0U);
}

// Runs the loop for `ms` (a probe of the disk is due after a pause).
void run_for(uv_loop_t* loop, std::uint64_t ms) {
  uv_timer_t timer;
  uv_timer_init(loop, &timer);
  bool fired = false;
  timer.data = &fired;
  uv_timer_start(
      &timer, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, ms, 0);
  while (!fired) uv_run(loop, UV_RUN_ONCE);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
}

// Records stop at the reserve, so the entries that free room still fit; once
// everything is resolved the writer starts a new segment, deletes the old
// one, and takes records again: a spool that filled its disk drains.
TEST(SpoolDiskFull, TheReserveKeepsRoomToResolveAndADrainedSpoolTakesRecordsAgain) {
  TempDir mount_point;
  SmallTmpfs fs(mount_point.path());
  if (!fs.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here (" << fs.error() << "); run as root";
  SpoolWriterConfig config;
  config.segment_bytes = 1024 * 1024;  // larger than the disk: one segment holds everything
  config.disk_reserve_bytes = 64 * 1024;
  WriterHarness h(mount_point.path() + "/spool", config);
  ASSERT_TRUE(h.ok());
  const Bytes batch = make_batch(4, 2000);
  std::vector<EntryId> accepted;
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    const auto r = h.append(records_entry(batch, 4));
    h.run();
    refused = h.result(r).refused;
    if (!refused) {
      ASSERT_EQ(h.result(r).status, 0) << "records stop at the reserve, before the disk is full";
      accepted.push_back(h.result(r).id);
    }
  }
  ASSERT_TRUE(refused) << "records were never refused for the reserve";
  ASSERT_FALSE(accepted.empty());
  EXPECT_TRUE(h.writer().disk_low());
  for (const EntryId id : accepted) {
    const auto r = h.append(ResolvedEntry{id, Outcome::kFailed, 2, -1});
    h.run();
    ASSERT_EQ(h.result(r).status, 0) << "a resolution fits in the reserve";
  }
  bool taken = false;
  for (int i = 0; i < 20 && !taken; ++i) {
    run_for(h.loop(), 150);
    const auto r = h.append(records_entry(batch, 4));
    h.run();
    taken = !h.result(r).refused && h.result(r).status == 0;
  }
  EXPECT_TRUE(taken) << "the drained spool never took records again";
}

}  // namespace
}  // namespace pp::spool
