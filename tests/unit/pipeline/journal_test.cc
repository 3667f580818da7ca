// Journaling for the spool (docs/design/PIPELINE.md): a batch carrying
// durable runs is journaled before it is sent and again whenever its
// sequences or boundaries change, its end is journaled, durable runs are
// never given up for a retriable reason, and restore() re-sends what a
// previous process left unresolved with exactly its identity and sequences.
// The journal is an in-memory double that answers when the test says so.
#include <tuple>

#include "proxy/pipeline/batch_journal.h"
#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/pipeline_fixture.h"

namespace pp::testing {
namespace {

class MemoryJournal final : public BatchJournal {
 public:
  struct Resolution {
    JournalId id;
    JournalOutcome outcome;
    ErrorCode error;
    std::int64_t base_offset;
  };

  void sequenced(const JournalBatch& batch, std::function<void(JournalId)> done) override {
    events.push_back("sequenced");
    pending.emplace_back(batch, std::move(done));
  }
  void resolved(JournalId batch, JournalOutcome outcome, ErrorCode error, std::int64_t base_offset) override {
    events.push_back("resolved");
    resolutions.push_back({batch, outcome, error, base_offset});
  }
  void records_failed(JournalRange records, ErrorCode error) override {
    events.push_back("records_failed");
    failed_records.emplace_back(records, error);
  }
  void identity(ProducerId producer_id, ProducerEpoch producer_epoch) override {
    events.push_back("identity");
    identities.emplace_back(producer_id.value, producer_epoch.value);
  }

  // Answers every outstanding sequenced() as durable; returns the ids given.
  std::vector<JournalId> commit() {
    auto answering = std::move(pending);
    pending.clear();
    std::vector<JournalId> ids;
    for (auto& [batch, done] : answering) {
      written.emplace_back(next_id, batch);
      ids.push_back(next_id);
      done(next_id++);
    }
    return ids;
  }
  // Answers every outstanding sequenced() as not written (a disk error).
  void fail_writes() {
    auto answering = std::move(pending);
    pending.clear();
    for (auto& [batch, done] : answering) done(kNoJournalId);
  }

  std::vector<std::pair<JournalBatch, std::function<void(JournalId)>>> pending;
  std::vector<std::pair<JournalId, JournalBatch>> written;
  std::vector<Resolution> resolutions;
  std::vector<std::pair<JournalRange, ErrorCode>> failed_records;
  std::vector<std::pair<std::int64_t, std::int16_t>> identities;
  std::vector<std::string> events;
  JournalId next_id = 100;
};

class JournalTest : public PipelineFixture {
 public:
  void SetUp() override {
    PipelineFixture::SetUp();
    observer = &counting;
  }

  // A producer with the journal, granted `producer_id`, leader 1 for t-0 and t-1.
  void start_journaled(std::int64_t producer_id = 1000) {
    producer = std::make_unique<IdempotentProducer>(config, upstream, clock, observer);
    producer->set_journal(&journal);
    poll();
    ASSERT_EQ(upstream.init_requests.size(), 1u);
    upstream.grant_producer_id(producer_id, 0);
    producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
    poll();
  }

  // A run of `count` records whose durable copy is spool entry `entry`,
  // from its record `first` on.
  std::size_t submit_durable(std::int32_t partition, int count, std::uint64_t entry, std::int32_t first = 0) {
    return submit_run(partition, durable_run(count, entry, first));
  }
  std::size_t submit_run(std::int32_t partition, RecordRun run) {
    const std::size_t slot = results.size();
    results.emplace_back();
    tickets.push_back(producer->submit("t", partition, std::move(run), done_into(slot)));
    return slot;
  }
  RunCompletion done_into(std::size_t slot) {
    return [this, slot](const RunResult& r) {
      ASSERT_FALSE(results[slot].has_value()) << "a run completed twice";
      results[slot] = r;
    };
  }
  static RecordRun durable_run(int count, std::uint64_t entry, std::int32_t first = 0) {
    auto storage = std::make_shared<std::vector<std::string>>();
    for (int i = 0; i < count; ++i) storage->push_back("d" + std::to_string(entry) + "-" + std::to_string(first + i));
    RecordRun run = run_of(std::move(storage));
    run.durable_entry = entry;
    run.durable_first_record = first;
    return run;
  }

  // A batch journaled by a previous process, for restore().
  RestoredBatch restored(std::int32_t partition, std::int64_t pid, std::int16_t epoch, std::int32_t base_sequence,
                         int count, JournalId id) {
    RestoredBatch b;
    b.tp = TopicPartition{"t", partition};
    b.producer_id = ProducerId(pid);
    b.producer_epoch = ProducerEpoch(epoch);
    b.base_sequence = base_sequence;
    b.record_count = count;
    b.journal_id = id;
    const std::size_t slot = results.size();
    results.emplace_back();
    b.runs.push_back(RestoredRun{durable_run(count, id + 1000), done_into(slot)});
    return b;
  }

  static std::tuple<std::int64_t, std::int16_t, std::int32_t, std::int32_t> identity_of(const SentBatch& b) {
    return {b.producer_id, b.producer_epoch, b.base_sequence, b.record_count};
  }

  CountingObserver counting;
  MemoryJournal journal;
  std::vector<RunTicket> tickets;
};

TEST_F(JournalTest, ABatchOfDurableRunsIsSentOnlyOnceItsEntryIsDurable) {
  start_journaled();
  EXPECT_EQ(journal.identities, (std::vector<std::pair<std::int64_t, std::int16_t>>{{1000, 0}}));
  const std::size_t slot = submit_durable(0, 3, 11, 4);
  poll();
  EXPECT_TRUE(upstream.outstanding.empty()) << "sent before its journal entry was durable";
  ASSERT_EQ(journal.pending.size(), 1u);
  const JournalBatch& entry = journal.pending[0].first;
  EXPECT_EQ(entry.tp, (TopicPartition{"t", 0}));
  EXPECT_EQ(entry.producer_id.value, 1000);
  EXPECT_EQ(entry.producer_epoch.value, 0);
  EXPECT_EQ(entry.base_sequence, 0);
  EXPECT_EQ(entry.record_count, 3);
  EXPECT_EQ(entry.supersedes, kNoJournalId);
  ASSERT_EQ(entry.ranges.size(), 1u);
  EXPECT_EQ(entry.ranges[0].records, 11u);
  EXPECT_EQ(entry.ranges[0].first_record, 4);
  EXPECT_EQ(entry.ranges[0].record_count, 3);

  const JournalId id = journal.commit().at(0);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto sent = upstream.take();
  EXPECT_EQ(identity_of(sent.batches[0]), std::make_tuple(1000L, std::int16_t{0}, 0, 3));
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(42); });
  ASSERT_EQ(journal.resolutions.size(), 1u);
  EXPECT_EQ(journal.resolutions[0].id, id);
  EXPECT_EQ(journal.resolutions[0].outcome, JournalOutcome::kAcknowledged);
  EXPECT_EQ(journal.resolutions[0].base_offset, 42);
  ASSERT_TRUE(results[slot].has_value());
  EXPECT_EQ(results[slot]->error, ErrorCode::kNone);
  EXPECT_EQ(journal.events, (std::vector<std::string>{"identity", "sequenced", "resolved"}));
}

TEST_F(JournalTest, ABatchWaitingForItsEntryHoldsItsPartitionOnly) {
  start_journaled();
  submit_durable(0, 1, 11);
  poll();
  ASSERT_EQ(journal.pending.size(), 1u);
  // Later runs of the same partition, durable or not, wait behind it; the
  // other partition goes.
  submit_durable(0, 1, 12);
  submit(std::string("t"), 0, 1, "plain");
  submit("t", 1, 2, "other");
  poll();
  EXPECT_EQ(journal.pending.size(), 1u) << "a second batch of t-0 was sequenced behind one not yet journaled";
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding[0].batches[0].tp.partition, 1);
  journal.commit();
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 2u);
  EXPECT_EQ(upstream.outstanding[1].batches[0].tp.partition, 0);
  EXPECT_EQ(upstream.outstanding[1].batches[0].base_sequence, 0);
  EXPECT_EQ(upstream.outstanding[1].batches[0].record_count, 1);
}

TEST_F(JournalTest, DurableAndOtherRunsNeverShareABatch) {
  start_journaled();
  upstream.node_ready[1] = false;  // everything queues
  submit_durable(0, 2, 11);
  submit("t", 0, 2, "plain");
  submit_durable(0, 2, 12);
  upstream.node_ready[1] = true;
  poll();
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.record_count, 2);
  journal.commit();
  poll();
  // The durable batch, then the plain one (not journaled), then the next durable one.
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto first = upstream.take();
  EXPECT_EQ(first.batches[0].record_count, 2);
  ScriptedUpstream::answer(first, [](const SentBatch&) { return ok(0); });
  poll();
  // The plain run goes alone and unjournaled; the next durable run is
  // sequenced after it, in a batch of its own.
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto second = upstream.take();
  EXPECT_EQ(second.batches[0].record_count, 2);
  EXPECT_EQ(second.batches[0].base_sequence, 2);
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 4);
  EXPECT_EQ(journal.pending[0].first.record_count, 2);
  ASSERT_EQ(journal.pending[0].first.ranges.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.ranges[0].records, 12u);
  EXPECT_EQ(journal.written.size(), 1u) << "a batch without durable runs was journaled";
}

TEST_F(JournalTest, AFailedJournalWriteIsRetriedAfterTheBackoff) {
  start_journaled();
  submit_durable(0, 2, 11);
  poll();
  journal.fail_writes();
  poll();
  EXPECT_TRUE(journal.pending.empty()) << "rewritten before the retry backoff";
  EXPECT_TRUE(upstream.outstanding.empty()) << "sent without a durable entry";
  clock.advance(config.retry_backoff_ms);
  EXPECT_LE(producer->next_wakeup_ms(), clock.now_ms());
  poll();
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 0);
  journal.commit();
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  EXPECT_EQ(upstream.outstanding[0].batches[0].base_sequence, 0);
}

TEST_F(JournalTest, AnEpochBumpJournalsTheIdentityThenTheRenumberedBatchSupersedingItsEntry) {
  start_journaled();
  submit_durable(0, 2, 11);
  poll();
  const JournalId first = journal.commit().at(0);
  poll();
  auto sent = upstream.take();
  // Head of line, not renumbered: the broker lost our state; bump and renumber.
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kOutOfOrderSequenceNumber); });
  journal.events.clear();
  poll();
  EXPECT_EQ(producer->identity().epoch.value, 1);
  EXPECT_TRUE(upstream.outstanding.empty()) << "renumbered batch sent before its new entry";
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.producer_epoch.value, 1);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 0);
  EXPECT_EQ(journal.pending[0].first.supersedes, first);
  EXPECT_EQ(journal.events, (std::vector<std::string>{"identity", "sequenced"}));
  EXPECT_EQ(journal.identities.back(), (std::pair<std::int64_t, std::int16_t>{1000, 1}));
  const JournalId second = journal.commit().at(0);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto retry = upstream.take();
  EXPECT_EQ(retry.batches[0].producer_epoch, 1);
  ScriptedUpstream::answer(retry, [](const SentBatch&) { return ok(7); });
  ASSERT_EQ(journal.resolutions.size(), 1u);
  EXPECT_EQ(journal.resolutions[0].id, second);
}

TEST_F(JournalTest, ASplitJournalsBothHalvesSupersedingTheOriginal) {
  start_journaled();
  submit_durable(0, 4, 11, 10);
  poll();
  const JournalId original = journal.commit().at(0);
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kMessageTooLarge); });
  poll();
  EXPECT_TRUE(upstream.outstanding.empty()) << "a split half was sent before its entry";
  ASSERT_EQ(journal.pending.size(), 1u) << "the halves go in order: the second waits for the first";
  const JournalBatch& front = journal.pending[0].first;
  EXPECT_EQ(front.supersedes, original);
  EXPECT_EQ(front.base_sequence, 0);
  ASSERT_EQ(front.ranges.size(), 1u);
  EXPECT_EQ(front.ranges[0].first_record, 10);
  EXPECT_EQ(front.ranges[0].record_count, 2);
  journal.commit();
  poll();
  auto half = upstream.take();
  EXPECT_EQ(half.batches[0].record_count, 2);
  ScriptedUpstream::answer(half, [](const SentBatch&) { return ok(0); });
  poll();
  ASSERT_EQ(journal.pending.size(), 1u);
  const JournalBatch& back = journal.pending[0].first;
  EXPECT_EQ(back.supersedes, original);
  EXPECT_EQ(back.base_sequence, 2);
  EXPECT_EQ(back.ranges[0].first_record, 12);
  EXPECT_EQ(back.ranges[0].record_count, 2);
}

TEST_F(JournalTest, ANonRetriableErrorFailsTheBatchInTheJournal) {
  start_journaled();
  const std::size_t slot = submit_durable(0, 2, 11);
  poll();
  const JournalId id = journal.commit().at(0);
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kTopicAuthorizationFailed); });
  ASSERT_EQ(journal.resolutions.size(), 1u);
  EXPECT_EQ(journal.resolutions[0].id, id);
  EXPECT_EQ(journal.resolutions[0].outcome, JournalOutcome::kFailed);
  EXPECT_EQ(journal.resolutions[0].error, ErrorCode::kTopicAuthorizationFailed);
  ASSERT_TRUE(results[slot].has_value());
  EXPECT_EQ(results[slot]->error, ErrorCode::kTopicAuthorizationFailed);
}

TEST_F(JournalTest, DurableRecordsGivenUpBeforeBatchingAreJournaledAsFailed) {
  start_journaled();
  upstream.node_ready[1] = false;
  submit_durable(0, 3, 11, 5);
  poll();
  TopicLeadership t;
  t.error = ErrorCode::kTopicAuthorizationFailed;
  producer->on_metadata(MetadataUpdate{{{"t", t}}});
  poll();
  ASSERT_EQ(journal.failed_records.size(), 1u);
  EXPECT_EQ(journal.failed_records[0].first.records, 11u);
  EXPECT_EQ(journal.failed_records[0].first.first_record, 5);
  EXPECT_EQ(journal.failed_records[0].first.record_count, 3);
  EXPECT_EQ(journal.failed_records[0].second, ErrorCode::kTopicAuthorizationFailed);
}

TEST_F(JournalTest, DurableRunsNeverExpireAndAreNeverWithdrawn) {
  config.delivery_timeout_ms = 1000;
  start_journaled();
  // One in flight, retried past its delivery timeout; one queued behind the
  // unreachable leader past it.
  const std::size_t sent_slot = submit_durable(0, 2, 11);
  poll();
  journal.commit();
  poll();
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSERT_EQ(upstream.outstanding.size(), 1u) << "attempt " << attempt;
    auto sent = upstream.take();
    ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(ErrorCode::kNotEnoughReplicas); });
    clock.advance(600);
    poll();
  }
  EXPECT_FALSE(results[sent_slot].has_value()) << "a durable batch expired";
  upstream.node_ready[1] = false;
  const std::size_t queued_slot = submit_durable(1, 1, 12);
  clock.advance(5000);
  poll();
  EXPECT_FALSE(results[queued_slot].has_value()) << "a queued durable run expired";
  EXPECT_EQ(producer->withdraw(tickets.back()), WithdrawOutcome::kInFlight);
  EXPECT_FALSE(results[queued_slot].has_value());
  upstream.node_ready[1] = true;
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(0); });
  ASSERT_TRUE(results[sent_slot].has_value());
  EXPECT_EQ(results[sent_slot]->error, ErrorCode::kNone);
  EXPECT_TRUE(journal.resolutions.size() == 1u);
}

// Restore: each batch goes with exactly its journaled identity and
// sequences, per partition in order; nothing new is sequenced until all are
// resolved; then a fresh producer id.
TEST_F(JournalTest, RestoredBatchesAreResentAsJournaledThenANewIdentityStarts) {
  producer = std::make_unique<IdempotentProducer>(config, upstream, clock, observer);
  producer->set_journal(&journal);
  std::vector<RestoredBatch> batches;
  batches.push_back(restored(0, 500, 3, 10, 2, 7));
  batches.push_back(restored(1, 400, 9, 0, 1, 8));
  batches.push_back(restored(0, 500, 3, 12, 3, 9));
  producer->restore(std::move(batches));
  poll();
  EXPECT_TRUE(upstream.init_requests.empty()) << "InitProducerId for a restored identity";
  producer->on_metadata(leaders("t", {{1, 0}, {1, 0}}));
  const std::size_t fresh = submit_durable(0, 1, 20);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto sent = upstream.take();
  ASSERT_EQ(sent.batches.size(), 2u);
  std::map<std::int32_t, SentBatch> by_partition;
  for (const auto& b : sent.batches) by_partition[b.tp.partition] = b;
  EXPECT_EQ(identity_of(by_partition[0]), std::make_tuple(500L, std::int16_t{3}, 10, 2));
  EXPECT_EQ(identity_of(by_partition[1]), std::make_tuple(400L, std::int16_t{9}, 0, 1));
  EXPECT_TRUE(journal.pending.empty()) << "a new batch was sequenced during replay";
  // The first already in the log: a duplicate; the other partition acked.
  // A new run for that partition still waits: no sequence may start under
  // the restored identity, whose later sequences may exist upstream.
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return ok(-1); });
  const std::size_t fresh_other = submit_durable(1, 1, 21);
  poll();
  ASSERT_EQ(upstream.outstanding.size(), 1u);
  auto next = upstream.take();
  EXPECT_EQ(identity_of(next.batches[0]), std::make_tuple(500L, std::int16_t{3}, 12, 3));
  EXPECT_TRUE(journal.pending.empty());
  EXPECT_TRUE(upstream.init_requests.empty());
  ScriptedUpstream::answer(next, [](const SentBatch&) { return ok(30); });
  ASSERT_EQ(journal.resolutions.size(), 3u);
  EXPECT_EQ(journal.resolutions[2].id, 9u);
  EXPECT_EQ(journal.resolutions[2].base_offset, 30);
  EXPECT_TRUE(journal.identities.empty()) << "the restored identity is in the journal already";
  poll();
  // Every restored batch resolved: a fresh id, journaled before the new batch.
  ASSERT_EQ(upstream.init_requests.size(), 1u);
  upstream.grant_producer_id(2000, 0);
  poll();
  EXPECT_EQ(counting.bumps["spool_replay"], 1);
  EXPECT_EQ(journal.identities, (std::vector<std::pair<std::int64_t, std::int16_t>>{{2000, 0}}));
  ASSERT_EQ(journal.pending.size(), 2u);
  for (const auto& [entry, done] : journal.pending) {
    EXPECT_EQ(entry.producer_id.value, 2000);
    EXPECT_EQ(entry.base_sequence, 0);
  }
  journal.commit();
  poll();
  auto first_new = upstream.take();
  ASSERT_EQ(first_new.batches.size(), 2u);
  for (const auto& b : first_new.batches) EXPECT_EQ(identity_of(b), std::make_tuple(2000L, std::int16_t{0}, 0, 1));
  ScriptedUpstream::answer(first_new, [](const SentBatch&) { return ok(40); });
  ASSERT_TRUE(results[fresh].has_value() && results[fresh_other].has_value());
  EXPECT_EQ(results[fresh]->error, ErrorCode::kNone);
  for (const auto& r : results) EXPECT_TRUE(r.has_value() && r->error == ErrorCode::kNone);
}

// A restored batch for a topic gone while the proxy was down can never be
// resolved upstream: it fails (journaled as failed), and new batches are no
// longer held by it.
TEST_F(JournalTest, ARestoredBatchOfADeletedTopicFailsAndReleasesNewBatches) {
  producer = std::make_unique<IdempotentProducer>(config, upstream, clock, observer);
  producer->set_journal(&journal);
  std::vector<RestoredBatch> batches;
  batches.push_back(restored(0, 500, 3, 10, 2, 7));
  producer->restore(std::move(batches));
  poll();
  TopicLeadership gone;
  gone.error = ErrorCode::kTopicAuthorizationFailed;
  producer->on_metadata(MetadataUpdate{{{"t", gone}}});
  poll();
  ASSERT_EQ(journal.resolutions.size(), 1u);
  EXPECT_EQ(journal.resolutions[0].id, 7u);
  EXPECT_EQ(journal.resolutions[0].outcome, JournalOutcome::kFailed);
  EXPECT_EQ(journal.resolutions[0].error, ErrorCode::kTopicAuthorizationFailed);
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(results[0]->error, ErrorCode::kTopicAuthorizationFailed);
  EXPECT_EQ(upstream.init_requests.size(), 1u) << "the replay did not end with a fresh identity";
}

// The broker forgot the producer (or knows a later epoch of it): the
// restored batch cannot be deduplicated; it is renumbered under a new id,
// journaled superseding its entry, delivered, and counted.
class ForgottenProducerTest : public JournalTest, public ::testing::WithParamInterface<ErrorCode> {};

TEST_P(ForgottenProducerTest, ARestoredBatchIsRenumberedUnderANewIdAndCounted) {
  producer = std::make_unique<IdempotentProducer>(config, upstream, clock, observer);
  producer->set_journal(&journal);
  std::vector<RestoredBatch> batches;
  batches.push_back(restored(0, 500, 3, 10, 2, 7));
  batches.push_back(restored(0, 500, 3, 12, 1, 8));
  producer->restore(std::move(batches));
  producer->on_metadata(leaders("t", {{1, 0}}));
  poll();
  auto sent = upstream.take();
  ScriptedUpstream::answer(sent, [](const SentBatch&) { return error(GetParam()); });
  poll();
  ASSERT_EQ(upstream.init_requests.size(), 1u) << "bumped to the next epoch of a restored identity";
  upstream.grant_producer_id(3000, 0);
  poll();
  // Both may be in the log from before the restart: both counted.
  EXPECT_EQ(counting.ambiguous["spool_replay"], 2);
  EXPECT_EQ(journal.identities, (std::vector<std::pair<std::int64_t, std::int16_t>>{{3000, 0}}));
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.supersedes, 7u);
  EXPECT_EQ(journal.pending[0].first.producer_id.value, 3000);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 0);
  journal.commit();
  poll();
  auto renumbered = upstream.take();
  EXPECT_EQ(identity_of(renumbered.batches[0]), std::make_tuple(3000L, std::int16_t{0}, 0, 2));
  ScriptedUpstream::answer(renumbered, [](const SentBatch&) { return ok(5); });
  poll();
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.supersedes, 8u);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 2);
  journal.commit();
  poll();
  auto second = upstream.take();
  EXPECT_EQ(identity_of(second.batches[0]), std::make_tuple(3000L, std::int16_t{0}, 2, 1));
  const std::size_t fresh = submit_durable(0, 1, 30);
  ScriptedUpstream::answer(second, [](const SentBatch&) { return ok(7); });
  // Replay over: the id this process was given moves to its next epoch, and
  // the new run is sequenced under it in the same poll.
  poll();
  EXPECT_EQ(counting.bumps["spool_replay"], 1);
  ASSERT_EQ(journal.pending.size(), 1u);
  EXPECT_EQ(journal.pending[0].first.producer_id.value, 3000);
  EXPECT_EQ(journal.pending[0].first.producer_epoch.value, 1);
  EXPECT_EQ(journal.pending[0].first.base_sequence, 0);
  for (std::size_t i = 0; i < fresh; ++i) EXPECT_TRUE(results[i].has_value() && results[i]->error == ErrorCode::kNone);
}

INSTANTIATE_TEST_SUITE_P(Errors, ForgottenProducerTest,
                         ::testing::Values(ErrorCode::kUnknownProducerId, ErrorCode::kInvalidProducerEpoch,
                                           ErrorCode::kOutOfOrderSequenceNumber));

}  // namespace
}  // namespace pp::testing
