// [spool]: parsed and checked where it is loaded, so --check-config and
// start-up say the same: an unwritable directory names its path and the
// system's reason; topic overrides are NAME=MODE or PREFIX*=MODE, first match
// wins; ack = "spool" needs a directory.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/load.h"
#include "config/spool_checks.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config {
namespace {

using test::error_lines;
using test::TempDir;

constexpr std::string_view kBase = "[upstream]\nbootstrap_servers = [\"kafka:9092\"]\n";

LoadResult load(const std::string& spool) {
  return parse_settings(std::string(kBase) + "[spool]\n" + spool, "proxy.toml");
}

std::string errors(const LoadResult& r) {
  std::string out;
  for (const auto& line : error_lines(r)) out += line + "\n";
  return out;
}

TEST(SpoolConfig, OffByDefaultAndEveryKeyParses) {
  const auto defaults = parse_settings(std::string(kBase), "proxy.toml");
  ASSERT_TRUE(defaults);
  EXPECT_FALSE(defaults->spool.enabled());
  EXPECT_EQ(defaults->spool.ack, SpoolAck::kUpstream);
  EXPECT_EQ(defaults->spool.fsync, SpoolFsync::kGroup);
  EXPECT_EQ(defaults->spool.fsync_interval_ms, 2);

  TempDir dir;
  const auto s =
      load("dir = \"" + dir.path("spool") +
           "\"\nmax_bytes = 2097152\nsegment_bytes = 65536\nack = \"spool\"\n"
           "topic_ack = [\"audit=upstream\", \"logs-*=spool\"]\nfsync = \"always\"\nfsync_interval_ms = 0\n");
  ASSERT_TRUE(s) << errors(s);
  EXPECT_TRUE(s->spool.enabled());
  EXPECT_EQ(s->spool.max_bytes, 2097152);
  EXPECT_EQ(s->spool.fsync, SpoolFsync::kAlways);
  EXPECT_EQ(spool_ack_for(s->spool, "audit"), SpoolAck::kUpstream);
  EXPECT_EQ(spool_ack_for(s->spool, "logs-app"), SpoolAck::kSpool);
  EXPECT_EQ(spool_ack_for(s->spool, "orders"), SpoolAck::kSpool);  // spool.ack
}

TEST(SpoolConfig, TheFirstMatchingOverrideWins) {
  SpoolSettings spool;
  spool.topic_ack = {"logs-audit=upstream", "logs-*=spool", "*=upstream"};
  spool.ack = SpoolAck::kSpool;
  EXPECT_EQ(spool_ack_for(spool, "logs-audit"), SpoolAck::kUpstream);
  EXPECT_EQ(spool_ack_for(spool, "logs-auditx"), SpoolAck::kSpool);
  EXPECT_EQ(spool_ack_for(spool, "orders"), SpoolAck::kUpstream);
  spool.topic_ack.clear();
  EXPECT_EQ(spool_ack_for(spool, "orders"), SpoolAck::kSpool);
}

TEST(SpoolConfig, BadOverridesAreNamed) {
  for (const char* bad : {"\"logs\"", "\"logs=later\"", "\"lo gs=spool\"", "\"=spool\"", "1"}) {
    const auto s = load(std::string("topic_ack = [") + bad + "]\n");
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(errors(s).find("spool.topic_ack[0]"), std::string::npos) << errors(s);
  }
}

TEST(SpoolConfig, AnUnwritableDirectoryIsNamedWithTheSystemsReason) {
  TempDir dir;
  const std::string locked = dir.path("locked");
  ASSERT_EQ(::mkdir(locked.c_str(), 0500), 0);
  std::string reason = "Permission denied";
  if (::geteuid() == 0) {
    // Root writes any directory whatever its mode: a read-only file system refuses it.
    if (::mount("tmpfs", locked.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
      GTEST_SKIP() << "running as root and mounting a read-only tmpfs is not permitted: " << std::strerror(errno);
    }
    reason = "Read-only file system";
  }
  const auto s = load("dir = \"" + locked + "/spool\"\n");
  if (::geteuid() == 0) ::umount2(locked.c_str(), MNT_DETACH);
  ASSERT_FALSE(s);
  EXPECT_NE(errors(s).find("spool.dir = \"" + locked + "/spool\" is not valid: " + locked +
                           "/spool does not exist and cannot be created: " + locked + ": " + reason),
            std::string::npos)
      << errors(s);
}

TEST(SpoolConfig, ADirectoryThatIsAFileIsRefused) {
  TempDir dir;
  const std::string file = dir.write("not-a-dir", "x");
  const auto s = load("dir = \"" + file + "\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(
      errors(s).find("proxy.toml:4:7: spool.dir = \"" + file + "\" is not valid: " + file + " is not a directory"),
      std::string::npos)
      << errors(s);
}

TEST(SpoolConfig, SpoolAckNeedsADirectoryAndASegmentFitsTheSpool) {
  const auto no_dir = load("ack = \"spool\"\n");
  ASSERT_FALSE(no_dir);
  EXPECT_NE(errors(no_dir).find("spool.ack asks for ack = \"spool\", which needs spool.dir"), std::string::npos)
      << errors(no_dir);
  const auto topic_no_dir = load("topic_ack = [\"logs-*=spool\"]\n");
  ASSERT_FALSE(topic_no_dir);
  EXPECT_NE(errors(topic_no_dir).find("spool.topic_ack asks"), std::string::npos) << errors(topic_no_dir);

  TempDir dir;
  const auto big = load("dir = \"" + dir.path("s") + "\"\nmax_bytes = 1048576\nsegment_bytes = 2097152\n");
  ASSERT_FALSE(big);
  EXPECT_NE(errors(big).find("spool.segment_bytes = 2097152 is larger than spool.max_bytes = 1048576"),
            std::string::npos)
      << errors(big);
}

}  // namespace
}  // namespace pp::config
