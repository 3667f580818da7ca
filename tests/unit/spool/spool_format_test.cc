// The on-disk format: every entry kind encodes and decodes to itself, whole;
// cut at any byte or followed by garbage it is refused, never misread
// (tests/unit/records/test_util.h's habit); the header refuses other magics,
// damaged headers and newer versions.
#include "proxy/spool/spool_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proxy/protocol/wire_reader.h"
#include "proxy/protocol/wire_writer.h"
#include "proxy/records/crc32c.h"
#include "proxy/spool/segment_reader.h"
#include "tests/unit/spool/spool_test_support.h"

namespace pp::spool {
namespace {

ClientProducersEntry client_producers() {
  ClientPartitionSnapshot t0{"t",
                             0,
                             1,
                             14,
                             {ClientBatchSnapshot{1, 0, 4, ClientBatchState::kAcked, 0, 100, 55, 3},
                              ClientBatchSnapshot{1, 5, 9, ClientBatchState::kFailed, 19, -1, -1, -1},
                              ClientBatchSnapshot{1, 10, 14, ClientBatchState::kPending, 0, -1, -1, -1}}};
  ClientPartitionSnapshot logs{"logs-a", 2, 0, 3, {ClientBatchSnapshot{0, 3, 3, ClientBatchState::kOutcomeUnknown, 7}}};
  return ClientProducersEntry{
      1LL << 50, {ClientProducerSnapshot{9000, 1, true, {t0, logs}}, ClientProducerSnapshot{9001, 0, false, {}}}};
}

std::vector<Entry> one_of_each(const Bytes& batch) {
  SequencedEntry seq{"t", 3, 7000, 2, 40, 5, 0, {RecordRange{1, 0, 3}, RecordRange{2, 1, 2}}};
  return {
      Entry{1, 100, testing::records_entry(batch, 3)},
      Entry{2, 101, IdentityEntry{7000, 2}},
      Entry{3, 102, seq},
      Entry{4, 103, ResolvedEntry{3, Outcome::kAcknowledged, 0, 1234}},
      Entry{5, 104, ClusterViewEntry{{TopicPartitions{"t", 4}, TopicPartitions{"logs-a", 1}}}},
      Entry{6, 105, client_producers()},
  };
}

TEST(SpoolFormat, EveryKindRoundTripsWhole) {
  const Bytes batch = testing::make_batch(3);
  for (const Entry& e : one_of_each(batch)) {
    Bytes out;
    const std::size_t size = encode_entry(e, out);
    ASSERT_EQ(size, out.size());
    EXPECT_EQ(size, encoded_size(e.body));
    const auto decoded = decode_entry_payload(ByteView(out).subspan(kEntryFrameBytes));
    ASSERT_TRUE(decoded) << decoded.error().describe();
    EXPECT_EQ(decoded->id, e.id);
    EXPECT_EQ(decoded->time_ms, e.time_ms);
    EXPECT_EQ(decoded->body, e.body);
  }
}

TEST(SpoolFormat, CutAtAnyByteOrWithGarbageAppendedIsRefused) {
  const Bytes batch = testing::make_batch(3);
  for (const Entry& e : one_of_each(batch)) {
    Bytes out;
    encode_entry(e, out);
    const ByteView payload = ByteView(out).subspan(kEntryFrameBytes);
    for (std::size_t n = 0; n < payload.size(); ++n) {
      EXPECT_FALSE(decode_entry_payload(payload.first(n))) << "kind " << e.body.index() << " cut at " << n;
    }
    Bytes longer(payload.begin(), payload.end());
    longer.push_back(0);
    EXPECT_FALSE(decode_entry_payload(longer)) << "kind " << e.body.index();
  }
}

TEST(SpoolFormat, ReferencesMustPointBackwards) {
  Bytes out;
  encode_entry(Entry{4, 0, ResolvedEntry{4, Outcome::kFailed, 2, -1}}, out);
  EXPECT_FALSE(decode_entry_payload(ByteView(out).subspan(kEntryFrameBytes)));
  out.clear();
  encode_entry(Entry{4, 0, SequencedEntry{"t", 0, 1, 0, 0, 1, 0, {RecordRange{9, 0, 1}}}}, out);
  EXPECT_FALSE(decode_entry_payload(ByteView(out).subspan(kEntryFrameBytes)));
}

TEST(SpoolFormat, RecordsMustBeOneWholeBatchWithTheCountSaid) {
  const Bytes batch = testing::make_batch(3);
  Bytes out;
  encode_entry(Entry{1, 0, testing::records_entry(batch, 2)}, out);
  EXPECT_FALSE(decode_entry_payload(ByteView(out).subspan(kEntryFrameBytes)));
}

TEST(SpoolFormat, HeaderRoundTripsAndRefusesDamageAndNewerVersions) {
  Bytes header;
  encode_segment_header(SegmentHeader{kFormatVersion, 42, 99}, header);
  ASSERT_EQ(header.size(), kSegmentHeaderBytes);
  const HeaderResult ok = decode_segment_header(header);
  EXPECT_FALSE(ok.problem);
  EXPECT_EQ(ok.header.segment_id, 42U);
  EXPECT_EQ(ok.header.created_ms, 99);

  Bytes newer;
  encode_segment_header(SegmentHeader{kFormatVersion + 1, 42, 99}, newer);
  EXPECT_EQ(decode_segment_header(newer).problem, HeaderProblem::kNewerVersion);
  // Recognised as newer from the magic, version, header size and the CRC at
  // the header's end, whatever the layout between them.
  Bytes longer(kSegmentMagic.begin(), kSegmentMagic.end());
  WireWriter w(longer);
  w.uint32(kFormatVersion + 7);
  w.uint32(64);
  longer.resize(60, 0xab);
  w.uint32(crc32c(longer));
  longer.resize(80, 0xcd);  // entries of a layout this build does not know
  EXPECT_EQ(decode_segment_header(longer).problem, HeaderProblem::kNewerVersion);
  // Torn before its end: it holds no entry.
  EXPECT_EQ(decode_segment_header(ByteView(newer).first(30)).problem, HeaderProblem::kTruncated);

  Bytes flipped = header;
  flipped[20] ^= 1;
  EXPECT_EQ(decode_segment_header(flipped).problem, HeaderProblem::kBadChecksum);
  Bytes magic = header;
  magic[0] = 'X';
  EXPECT_EQ(decode_segment_header(magic).problem, HeaderProblem::kBadMagic);
  EXPECT_EQ(decode_segment_header(ByteView(header).first(20)).problem, HeaderProblem::kTruncated);
}

// A version field changed on disk is damage, not a newer format: the
// header's CRC does not verify. Refusing it would stop the proxy from
// starting over one flipped byte.
TEST(SpoolFormat, AFlippedVersionFieldIsDamageNotANewerFormat) {
  Bytes header;
  encode_segment_header(SegmentHeader{kFormatVersion, 42, 99}, header);
  for (std::size_t at = 8; at < 12; ++at) {
    for (const std::uint8_t flip : {0x01, 0x02, 0x10, 0x80, 0xff}) {
      Bytes damaged = header;
      damaged[at] ^= flip;
      const auto problem = decode_segment_header(damaged).problem;
      ASSERT_TRUE(problem) << "byte " << at << " ^ " << int{flip};
      EXPECT_NE(*problem, HeaderProblem::kNewerVersion) << "byte " << at << " ^ " << int{flip};
    }
  }
  // The same damage to a segment with entries behind its header.
  Bytes segment = header;
  segment.resize(200, 0x11);
  segment[10] ^= 0x33;
  EXPECT_EQ(decode_segment_header(segment).problem, HeaderProblem::kBadChecksum);
}

// The fuzz seeds are written by tests/fuzz/seeds/spool_seeds.py from
// docs/design/SPOOL.md alone: the layout documented is the layout read.
TEST(SpoolFormat, ASegmentWrittenFromTheDocumentReadsWhole) {
  std::ifstream in(std::string(PP_SOURCE_DIR) + "/tests/fuzz/seeds/fuzz_spool_segment/segment_every_kind.hex");
  std::stringstream hex;
  hex << in.rdbuf();
  const std::string text = hex.str();
  ASSERT_FALSE(text.empty());
  Bytes bytes;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    bytes.push_back(static_cast<std::uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16)));
  }
  std::vector<EntryKind> kinds;
  const SegmentScan scan = SegmentReader().scan(bytes, [&](const Entry& e, std::size_t, std::size_t) {
    kinds.push_back(static_cast<EntryKind>(e.body.index() + 1));
  });
  EXPECT_FALSE(scan.damage) << *scan.damage;
  EXPECT_EQ(scan.valid_bytes, bytes.size());
  const std::vector<EntryKind> expected{EntryKind::kIdentity,  EntryKind::kClusterView, EntryKind::kRecords,
                                        EntryKind::kRecords,   EntryKind::kSequenced,   EntryKind::kResolved,
                                        EntryKind::kSequenced, EntryKind::kSequenced,   EntryKind::kResolved};
  EXPECT_EQ(kinds, expected);
}

// The client producers entry as spool_seeds.py writes it from the document:
// a snapshot, then two client records entries, the second voided.
TEST(SpoolFormat, AClientProducersSnapshotWrittenFromTheDocumentReadsWhole) {
  std::ifstream in(std::string(PP_SOURCE_DIR) + "/tests/fuzz/seeds/fuzz_spool_segment/segment_client_producers.hex");
  std::stringstream hex;
  hex << in.rdbuf();
  const std::string text = hex.str();
  ASSERT_FALSE(text.empty());
  Bytes bytes;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    bytes.push_back(static_cast<std::uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16)));
  }
  SpoolIndex index;
  const SegmentScan scan = SegmentReader().scan(bytes, [&](const Entry& e, std::size_t offset, std::size_t size) {
    index.apply(e, EntryLocation{2, offset, size});
  });
  EXPECT_FALSE(scan.damage) << *scan.damage;
  ASSERT_TRUE(index.client_producers());
  EXPECT_EQ(index.client_producers_id(), 11U);
  const ClientProducersEntry& s = *index.client_producers();
  EXPECT_EQ(s.next_producer_id, 5000);
  ASSERT_EQ(s.producers.size(), 2U);
  EXPECT_TRUE(s.producers[0].bumped_by_request);
  ASSERT_EQ(s.producers[0].partitions.size(), 2U);
  EXPECT_EQ(s.producers[0].partitions[0].batches[1],
            (ClientBatchSnapshot{1, 5, 9, ClientBatchState::kPending, 0, -1, -1, -1}));
  EXPECT_EQ(s.producers[1].partitions[0].batches[1],
            (ClientBatchSnapshot{0, 3, 3, ClientBatchState::kOutcomeUnknown, 7, 12, -1, -1}));
  const std::vector<ClientRecord> records = index.client_records();
  ASSERT_EQ(records.size(), 1U);  // entry 13 was voided
  EXPECT_EQ(records[0], (ClientRecord{12, "t", 0, 4000, 1, 5, 5}));
}

}  // namespace
}  // namespace pp::spool
