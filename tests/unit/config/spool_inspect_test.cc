// `produce-proxy spool inspect DIR` and the refusal of ack = "spool": the
// command line takes the subcommand; the report names the segments, the
// unresolved batch with its identity, the records owed per partition, the
// oldest record's age and a torn tail, and changes nothing on disk; a
// configuration asking for ack = "spool" is refused by --check-config.
#include "daemon/spool_inspect.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/cli.h"
#include "proxy/spool/spool_format.h"
#include "tests/unit/config/config_test_support.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp {
namespace {

using spool::testing::make_batch;
using spool::testing::records_entry;
using spool::testing::WriterHarness;

TEST(SpoolInspect, TheSubcommandParses) {
  const char* argv[] = {"produce-proxy", "spool", "inspect", "/var/lib/produce-proxy"};
  const auto cli = parse_command_line(argv, "1.0");
  ASSERT_TRUE(cli);
  EXPECT_EQ(cli->spool_inspect, "/var/lib/produce-proxy");
  const char* missing[] = {"produce-proxy", "spool", "inspect"};
  const auto bad = parse_command_line(missing, "1.0");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().exit_code, kExitBadConfig);
}

TEST(SpoolInspect, ReportsWhatIsOwedAndChangesNothing) {
  spool::testing::TempDir dir;
  std::int64_t appended_ms = 0;
  {
    WriterHarness h(dir.path());
    const Bytes batch = make_batch(3);
    h.append(spool::IdentityEntry{4242, 3});
    const auto r1 = h.append(records_entry(batch, 3, "orders", 2));
    const auto r2 = h.append(records_entry(batch, 3, "logs", 0));
    h.run();
    h.append(spool::SequencedEntry{"orders", 2, 4242, 3, 17, 3, spool::kNoEntry, {{h.result(r1).id, 0, 3}}});
    h.run();
    (void)r2;
    appended_ms = *h.observer().oldest_ms;
  }
  // A torn tail, as a kill mid-write leaves.
  const std::string segment = dir.path() + "/" + spool::segment_file_name(1);
  { std::ofstream(segment, std::ios::app | std::ios::binary) << "torn"; }
  const auto size_before = std::filesystem::file_size(segment);

  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(spool_inspect(dir.path(), appended_ms + 90000, out, err), 0) << err.str();
  const std::string report = out.str();
  EXPECT_NE(report.find("segments: 1"), std::string::npos) << report;
  EXPECT_NE(report.find("producer identity: id=4242 epoch=3"), std::string::npos) << report;
  EXPECT_NE(report.find("orders/2  unresolved batches=1 (records=3)"), std::string::npos) << report;
  EXPECT_NE(report.find("logs/0  unresolved batches=0 (records=0) unsequenced records=3 in 1 entries"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("producer_id=4242 epoch=3 base_sequence=17 records=3"), std::string::npos) << report;
  EXPECT_NE(report.find("oldest record age: 90 s"), std::string::npos) << report;
  EXPECT_NE(report.find("a start would cut a torn tail of 4 bytes"), std::string::npos) << report;
  EXPECT_EQ(std::filesystem::file_size(segment), size_before) << "inspect is read-only";
}

TEST(SpoolInspect, ShowsTheClientProducersSnapshotAndTheClientRecordsAfterIt) {
  spool::testing::TempDir dir;
  {
    WriterHarness h(dir.path());
    h.writer().set_client_producers_source([] {
      spool::ClientPartitionSnapshot t{
          "orders", 1, 2, 9, {spool::ClientBatchSnapshot{2, 5, 9, spool::ClientBatchState::kAcked, 0, 40, -1, -1}}};
      return spool::ClientProducersEntry{777, {spool::ClientProducerSnapshot{9000, 2, true, {t}}}};
    });
    const Bytes batch = make_batch(2);
    spool::RecordsEntry e = records_entry(batch, 2, "orders", 1);
    e.client_producer_id = 9000;
    e.client_producer_epoch = 2;
    e.client_base_sequence = 10;
    h.append(e);
    h.run();
  }
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(spool_inspect(dir.path(), 0, out, err), 0) << err.str();
  const std::string report = out.str();
  EXPECT_NE(report.find("1 producers, next_producer_id=777; 1 client records entries after it"), std::string::npos)
      << report;
  EXPECT_NE(report.find("producer 9000 epoch=2 (bumped)"), std::string::npos) << report;
  EXPECT_NE(report.find("orders/1  epoch=2 last_sequence=9 batches: 2:5-9=acked"), std::string::npos) << report;
  EXPECT_NE(report.find("orders/1  producer_id=9000 epoch=2 base_sequence=10 records=2"), std::string::npos) << report;
}

TEST(SpoolInspect, ANewerFormatIsRefusedWithExitOne) {
  spool::testing::TempDir dir;
  Bytes header;
  spool::encode_segment_header(spool::SegmentHeader{spool::kFormatVersion + 1, 1, 0}, header);
  std::ofstream(dir.path() + "/" + spool::segment_file_name(1), std::ios::binary)
      .write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(spool_inspect(dir.path(), 0, out, err), 1);
  EXPECT_NE(err.str().find("written by spool format version 2"), std::string::npos) << err.str();
}

// ack = "spool" is served: --check-config takes it like any valid key.
TEST(SpoolAck, CheckConfigAcceptsIt) {
  config::test::TempDir dir;
  const std::string file =
      dir.write("proxy.toml", "[upstream]\nbootstrap_servers = [\"kafka:9092\"]\n[spool]\ndir = \"" +
                                  dir.path("spool") + "\"\ntopic_ack = [\"logs-*=spool\"]\n");
  const char* argv[] = {"produce-proxy", "--check-config", "--config", file.c_str()};
  const auto cli = parse_command_line(argv, "1.0");
  ASSERT_TRUE(cli);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(check_config(*cli, out, err), kExitClean) << err.str();
  EXPECT_NE(out.str().find(": ok"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace pp
