// Recovery of damaged spools: a kill mid-write (the last segment cut at 100
// random offsets) loses exactly the entries not whole before the cut; random
// flipped bytes never yield an entry that differs from what was written and
// never crash; a damaged middle segment is moved aside and named while the
// others are read; a newer format version refuses the directory, a damaged
// version field does not.
#include "proxy/spool/spool_recovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "proxy/records/crc32c.h"
#include "proxy/spool/segment_reader.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp::spool {
namespace {

namespace fs = std::filesystem;
using testing::make_batch;
using testing::records_entry;
using testing::TempDir;
using testing::WriterHarness;

Bytes read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, ByteView bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> segment_paths(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Writes `n` records entries of varied sizes (one commit each, so each
// commit's tail is a possible tear) and returns the ids.
std::vector<EntryId> write_records(const std::string& dir, int n, SpoolWriterConfig config = {}) {
  config.fsync = FsyncPolicy::kAlways;
  WriterHarness h(dir, config);
  std::vector<EntryId> ids;
  for (int i = 0; i < n; ++i) {
    const Bytes batch = make_batch(1 + i % 3, 10 + static_cast<std::size_t>(i) * 7, static_cast<std::uint8_t>(i));
    const auto r = h.append(records_entry(batch, 1 + i % 3, "t", i % 2));
    h.run();
    ids.push_back(h.result(r).id);
  }
  return ids;
}

// Every entry of a segment: offset -> (id, bytes).
std::map<std::size_t, std::pair<EntryId, Bytes>> entries_of(ByteView segment) {
  std::map<std::size_t, std::pair<EntryId, Bytes>> out;
  SegmentReader().scan(segment, [&](const Entry& e, std::size_t offset, std::size_t size) {
    out[offset] = {e.id, Bytes(segment.begin() + static_cast<std::ptrdiff_t>(offset),
                               segment.begin() + static_cast<std::ptrdiff_t>(offset + size))};
  });
  return out;
}

TEST(SpoolRecovery, ATornTailLosesOnlyTheEntriesNotWholeBeforeTheCut) {
  TempDir source;
  write_records(source.path(), 40);
  const auto files = segment_paths(source.path());
  ASSERT_EQ(files.size(), 1U);
  const Bytes original = read_all(files[0]);
  const auto entries = entries_of(original);
  ASSERT_EQ(entries.size(), 40U);
  std::mt19937 rng(42);
  for (int round = 0; round < 100; ++round) {
    const std::size_t cut = std::uniform_int_distribution<std::size_t>(0, original.size() - 1)(rng);
    TempDir dir;
    const std::string path = dir.path() + "/" + fs::path(files[0]).filename().string();
    write_all(path, ByteView(original).first(cut));
    const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
    ASSERT_TRUE(recovered) << recovered.error();
    std::size_t whole = 0;
    std::size_t boundary = kSegmentHeaderBytes;
    for (const auto& [offset, entry] : entries) {
      if (offset + entry.second.size() > cut) break;
      ++whole;
      boundary = offset + entry.second.size();
    }
    EXPECT_EQ(recovered->index.unresolved_records().size(), whole) << "cut at " << cut;
    if (cut < kSegmentHeaderBytes) {
      EXPECT_FALSE(fs::exists(path)) << "a segment torn in its header is removed";
      continue;
    }
    EXPECT_EQ(recovered->report.torn_bytes, cut - boundary) << "cut at " << cut;
    EXPECT_EQ(fs::file_size(path), boundary) << "the torn tail is cut off, cut at " << cut;
    // The next start finds nothing more to cut.
    const auto again = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->report.torn_bytes, 0U);
    EXPECT_EQ(again->index.unresolved_records().size(), whole);
  }
}

TEST(SpoolRecovery, FlippedBytesNeverYieldAnEntryThatWasNotWritten) {
  TempDir source;
  write_records(source.path(), 40);
  const auto files = segment_paths(source.path());
  const Bytes original = read_all(files[0]);
  const auto entries = entries_of(original);
  std::map<EntryId, Bytes> by_id;
  for (const auto& [offset, entry] : entries) by_id[entry.first] = entry.second;
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    Bytes damaged = original;
    const int flips = 1 + round % 4;
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, damaged.size() - 1)(rng);
      damaged[at] ^= static_cast<std::uint8_t>(1 + std::uniform_int_distribution<int>(0, 254)(rng));
    }
    TempDir dir;
    write_all(dir.path() + "/" + fs::path(files[0]).filename().string(), damaged);
    const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
    ASSERT_TRUE(recovered) << recovered.error();
    // Whatever is yielded is byte for byte an entry that was written, in order.
    EntryId expected_next = by_id.begin()->first;
    for (const PendingRecords& r : recovered->index.unresolved_records()) {
      ASSERT_EQ(r.id, expected_next) << "round " << round;
      const Bytes& written = by_id.at(r.id);
      const Bytes now = read_all(recovered->paths.at(r.location.segment));
      ASSERT_LE(r.location.offset + r.location.size, now.size());
      ASSERT_TRUE(bytes_equal(ByteView(now).subspan(r.location.offset, r.location.size), written)) << "round " << round;
      expected_next = std::next(by_id.find(r.id)) == by_id.end() ? 0 : std::next(by_id.find(r.id))->first;
    }
  }
}

TEST(SpoolRecovery, ACorruptMiddleSegmentIsMovedAsideAndTheRestIsRead) {
  TempDir dir;
  SpoolWriterConfig config;
  config.segment_bytes = 600;
  const auto ids = write_records(dir.path(), 12, config);
  auto files = segment_paths(dir.path());
  ASSERT_GE(files.size(), 3U);
  const std::string middle = files[1];
  const auto middle_entries = entries_of(read_all(middle));
  ASSERT_FALSE(middle_entries.empty());
  Bytes bytes = read_all(middle);
  bytes[middle_entries.begin()->first + 30] ^= 0x5a;  // inside its first entry
  write_all(middle, bytes);

  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
  ASSERT_TRUE(recovered) << recovered.error();
  ASSERT_EQ(recovered->report.moved_aside.size(), 1U);
  EXPECT_EQ(recovered->report.moved_aside[0], middle + ".corrupt");
  EXPECT_TRUE(fs::exists(middle + ".corrupt"));
  EXPECT_FALSE(fs::exists(middle));
  EXPECT_GT(recovered->report.corrupt_bytes, 0U);
  EXPECT_EQ(recovered->report.torn_bytes, 0U);
  // Every entry but the middle segment's is still owed.
  EXPECT_EQ(recovered->index.unresolved_records().size(), ids.size() - middle_entries.size());

  // The next start reads the moved segment as it is and counts nothing again.
  const auto again = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->report.corrupt_bytes, 0U);
  EXPECT_TRUE(again->report.moved_aside.empty());
  EXPECT_EQ(again->index.unresolved_records().size(), ids.size() - middle_entries.size());
}

// A flipped byte in a segment's version field is damage like any other: the
// last segment's entries are cut, a middle one is moved aside, and the
// proxy starts; it is not a newer format refusing the directory.
TEST(SpoolRecovery, AFlippedVersionFieldIsDamageNotANewerFormat) {
  TempDir dir;
  SpoolWriterConfig config;
  config.segment_bytes = 600;
  const auto ids = write_records(dir.path(), 12, config);
  const auto files = segment_paths(dir.path());
  ASSERT_GE(files.size(), 3U);
  const std::string& middle = files[1];
  const std::string& last = files.back();
  const std::size_t lost = entries_of(read_all(middle)).size() + entries_of(read_all(last)).size();
  for (const std::string& f : {middle, last}) {
    Bytes bytes = read_all(f);
    bytes[9] ^= 0x40;  // version @8: 0x00400001, far above this build's
    write_all(f, bytes);
  }
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
  ASSERT_TRUE(recovered) << recovered.error();
  EXPECT_EQ(recovered->report.moved_aside.size(), 2U);
  EXPECT_TRUE(fs::exists(middle + ".corrupt"));
  EXPECT_TRUE(fs::exists(last + ".corrupt"));
  EXPECT_EQ(recovered->index.unresolved_records().size(), ids.size() - lost);
}

void reseal_header(Bytes& segment) {
  const std::uint32_t crc = crc32c(ByteView(segment).first(kSegmentHeaderBytes - 4));
  for (int i = 0; i < 4; ++i) segment[kSegmentHeaderBytes - 4 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
}

TEST(SpoolRecovery, ASegmentOfANewerFormatRefusesTheDirectory) {
  TempDir dir;
  write_records(dir.path(), 3);
  const auto files = segment_paths(dir.path());
  Bytes bytes = read_all(files[0]);
  bytes[11] = static_cast<std::uint8_t>(kFormatVersion + 1);  // version @8, big-endian
  reseal_header(bytes);                                       // as a newer build writes it
  write_all(files[0], bytes);
  const auto recovered = SpoolRecovery(dir.path(), SpoolRecovery::Mode::kRepair).run();
  ASSERT_FALSE(recovered);
  EXPECT_NE(recovered.error().find("newer"), std::string::npos) << recovered.error();
  EXPECT_NE(recovered.error().find("format version 2"), std::string::npos) << recovered.error();
  EXPECT_NE(recovered.error().find(files[0]), std::string::npos) << recovered.error();
  EXPECT_EQ(read_all(files[0]), bytes) << "nothing is changed in a refused directory";
}

}  // namespace
}  // namespace pp::spool
