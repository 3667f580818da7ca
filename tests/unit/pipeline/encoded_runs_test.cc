// A client's RecordBatch v2 records carried upstream without re-encoding
// (issue 17), and the record-by-record path wherever they cannot be.
#include <optional>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/support/raw_records.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000;

struct ClientBatchStorage {
  Bytes wire;
  std::optional<RecordBatchView> batch;
};

// What the front end makes of one client batch of `values`: decoded records
// and, beside them, the encoded section. The client's base timestamp is 10 ms
// below its first record's, as no re-encoding would write it, so a test can
// tell the client's bytes from the proxy's.
RecordRun encoded_run(const std::vector<std::string>& values) {
  auto storage = std::make_shared<ClientBatchStorage>();
  std::vector<std::pair<std::int32_t, std::int64_t>> deltas;
  for (std::size_t i = 0; i < values.size(); ++i) deltas.emplace_back(static_cast<std::int32_t>(i), 10 + i);
  storage->wire = test::batch_with_deltas(deltas, kBase - 10, TimestampType::kCreateTime, values);
  auto decoded = decode_record_batch(storage->wire);
  EXPECT_TRUE(decoded);
  storage->batch.emplace(std::move(*decoded));
  RecordRun run;
  for (const RecordView& r : storage->batch->records()) {
    RunRecord& out = run.records.emplace_back();
    out.timestamp_ms = storage->batch->timestamp_of(r);
    out.key = r.key;
    out.value = r.value;
    out.headers = r.headers;
  }
  run.encoded =
      EncodedRecords{storage->batch->records_bytes(), kBase - 10, kBase + static_cast<std::int64_t>(values.size()) - 1};
  run.storage = std::move(storage);
  return run;
}

class EncodedRunsTest : public PipelineFixture {
 public:
  std::size_t submit_encoded(const std::vector<std::string>& values) {
    const std::size_t slot = results.size();
    results.emplace_back();
    RecordRun run = encoded_run(values);
    submitted_sections.push_back(run.encoded->bytes);
    producer->submit("t", 0, std::move(run), [this, slot](const RunResult& r) { results[slot] = r; });
    return slot;
  }
  std::vector<ByteView> submitted_sections;  // each encoded run's section, where its storage holds it

  // The sent batch's values in order, after checking every offset delta.
  static std::vector<std::string> values_of(const SentBatch& sent) {
    auto batch = decode_record_batch(sent.bytes);
    EXPECT_TRUE(batch) << batch.error().describe();
    std::vector<std::string> out;
    for (const RecordView& r : batch->records()) {
      EXPECT_EQ(r.offset_delta, static_cast<std::int32_t>(out.size()));
      out.emplace_back(r.value->begin(), r.value->end());
    }
    return out;
  }
  static std::string records_section(const Bytes& batch) {
    return {batch.begin() + record_batch_layout::kRecords, batch.end()};
  }
};

TEST_F(EncodedRunsTest, ARunThatStartsABatchGoesByteForByteUnderTheProxysIdentity) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  const RecordRun reference = encoded_run({"a", "b", "c"});
  submit_encoded({"a", "b", "c"});
  poll();
  auto sent = upstream.take_with("t", 0);
  ASSERT_EQ(sent.batches.size(), 1u);
  const SentBatch& b = sent.batches[0];
  EXPECT_EQ(b.producer_id, 1000);
  EXPECT_EQ(b.base_sequence, 0);
  EXPECT_EQ(b.record_count, 3);
  EXPECT_EQ(records_section(b.bytes), std::string(reference.encoded->bytes.begin(), reference.encoded->bytes.end()));
  // Not even copied: the batch borrows the section where the run keeps it.
  ASSERT_EQ(b.borrowed.size(), 1u);
  EXPECT_EQ(b.borrowed[0].data(), submitted_sections[0].data());
  EXPECT_EQ(b.borrowed[0].size(), submitted_sections[0].size());
  EXPECT_EQ(values_of(b), (std::vector<std::string>{"a", "b", "c"}));
  RecordBatchBuilder reencoded;
  for (const RunRecord& r : reference.records) reencoded.append(r.timestamp_ms, r.key, r.value, r.headers);
  EXPECT_NE(records_section(reencoded.build()), records_section(b.bytes)) << "the test tells the two paths apart";
  auto upstream_batch = decode_record_batch(b.bytes);
  ASSERT_TRUE(upstream_batch);
  EXPECT_EQ(upstream_batch->header().base_timestamp, kBase - 10);
  EXPECT_EQ(upstream_batch->header().max_timestamp, kBase + 2);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(upstream_batch->timestamp_of(upstream_batch->records()[i]), kBase + static_cast<std::int64_t>(i));
  }
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(500); });
  poll();
  ASSERT_TRUE(results[0]);
  EXPECT_EQ(results[0]->base_offset, 500);
}

TEST_F(EncodedRunsTest, BehindOtherRecordsARunIsWrittenRecordByRecord) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  submit("t", 0, 3, "plain");
  submit_encoded({"x", "y"});
  submit_encoded({"z"});
  poll();
  auto sent = upstream.take_with("t", 0);
  ASSERT_EQ(sent.batches.size(), 1u);
  EXPECT_EQ(values_of(sent.batches[0]), (std::vector<std::string>{"plain-0", "plain-1", "plain-2", "x", "y", "z"}));
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(500); });
  poll();
  ASSERT_TRUE(results[0] && results[1] && results[2]);
  EXPECT_EQ(results[0]->base_offset, 500);
  EXPECT_EQ(results[1]->base_offset, 503);
  EXPECT_EQ(results[2]->base_offset, 505);
}

TEST_F(EncodedRunsTest, AnEncodedRunFirstThenPlainRecordsAfterIt) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  const RecordRun reference = encoded_run({"x", "y"});
  submit_encoded({"x", "y"});
  submit("t", 0, 2, "plain");
  poll();
  auto sent = upstream.take_with("t", 0);
  ASSERT_EQ(sent.batches.size(), 1u);
  EXPECT_EQ(values_of(sent.batches[0]), (std::vector<std::string>{"x", "y", "plain-0", "plain-1"}));
  const std::string section = records_section(sent.batches[0].bytes);
  EXPECT_EQ(section.substr(0, reference.encoded->bytes.size()),
            std::string(reference.encoded->bytes.begin(), reference.encoded->bytes.end()));
  ASSERT_EQ(sent.batches[0].borrowed.size(), 1u);  // the plain records after it are the batch's own
  EXPECT_EQ(sent.batches[0].borrowed[0].data(), submitted_sections[0].data());
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(10); });
  poll();
  ASSERT_TRUE(results[0] && results[1]);
  EXPECT_EQ(results[1]->base_offset, 12);
}

// C.7: an epoch bump re-stamps a batch in place. A borrowed section is
// the client's and stays as it is: only the header and the CRC change.
TEST_F(EncodedRunsTest, ABumpReStampsABorrowedSectionsBatchWithoutCopyingIt) {
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  ack_first_batch("t", 0);
  submit_encoded({"x0", "x1"});  // seq 1-2
  poll();
  submit_encoded({"y0", "y1"});  // seq 3-4
  poll();
  auto x = upstream.take();
  auto y = upstream.take();
  ScriptedUpstream::answer(x, [](const SentBatch&) { return error(ErrorCode::kInvalidRecord); });
  ScriptedUpstream::answer(y, [](const SentBatch&) { return error(ErrorCode::kOutOfOrderSequenceNumber); });
  poll();
  EXPECT_EQ(producer->identity().epoch.value, 1);
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  const SentBatch& renumbered = upstream.outstanding.front().batches[0];
  EXPECT_EQ(renumbered.producer_epoch, 1);
  EXPECT_EQ(renumbered.base_sequence, 0);
  ASSERT_EQ(renumbered.borrowed.size(), 1u);
  EXPECT_EQ(renumbered.borrowed[0].data(), submitted_sections[1].data());
  EXPECT_EQ(values_of(renumbered), (std::vector<std::string>{"y0", "y1"}));  // the CRC checks
  auto retry = upstream.take();
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(7); });
  poll();
  ASSERT_TRUE(results[1] && results[2]);
  EXPECT_EQ(results[1]->error, ErrorCode::kInvalidRecord);
  EXPECT_EQ(results[2]->error, ErrorCode::kNone);
  EXPECT_EQ(results[2]->base_offset, 7);
}

TEST_F(EncodedRunsTest, ARunLargerThanABatchSpansBatchesRecordByRecord) {
  config.batch_bytes = 200;
  start();
  producer->on_metadata(leaders("t", {{1, 0}}));
  std::vector<std::string> values;
  for (int i = 0; i < 8; ++i) values.push_back(std::string(40, static_cast<char>('a' + i)));
  submit_encoded(values);
  std::vector<std::string> delivered;
  std::int64_t offset = 100;
  for (int round = 0; round < 8 && delivered.size() < values.size(); ++round) {
    poll();
    auto sent = upstream.take_with("t", 0);
    ASSERT_EQ(sent.batches.size(), 1u);
    EXPECT_LE(sent.batches[0].bytes.size(), config.batch_bytes);
    for (auto& v : values_of(sent.batches[0])) delivered.push_back(v);
    const std::int64_t base = offset;
    offset += sent.batches[0].record_count;
    ScriptedUpstream::answer(sent, [base](const SentBatch&) { return ok(base); });
  }
  poll();
  EXPECT_EQ(delivered, values);
  ASSERT_TRUE(results[0]);
  EXPECT_EQ(results[0]->error, ErrorCode::kNone);
  EXPECT_EQ(results[0]->base_offset, 100);
}

}  // namespace
}  // namespace pp::testing
