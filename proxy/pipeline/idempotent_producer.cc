#include "proxy/pipeline/idempotent_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "proxy/pipeline/batch_rebuild.h"

namespace pp {

IdempotentProducer::IdempotentProducer(PipelineConfig config, UpstreamPort& upstream, const Clock& clock,
                                       PipelineObserver* observer)
    : config_(config), upstream_(upstream), clock_(clock), observer_(observer ? observer : &default_observer_) {
  journaling_.set_wakeup([this] { wake(); });
}

IdempotentProducer::~IdempotentProducer() {
  *alive_ = false;
}

// ---- replay after a restart (PIPELINE.md, "Journaling for the spool") ----

void IdempotentProducer::restore(std::vector<RestoredBatch> batches) {
  if (batches.empty()) return;
  const std::int64_t now = clock_.now_ms();
  std::set<ProducerIdAndEpoch> identities;
  for (RestoredBatch& restored : batches) {
    identities.insert(ProducerIdAndEpoch{restored.producer_id, restored.producer_epoch});
    restore_batch(restored, now);
  }
  // Each batch goes under its own identity (its bytes carry it); the
  // producer holds the last one journaled, so no InitProducerId is sent. The
  // epochs after it may have been used before the restart: any bump takes a
  // new producer id.
  const ProducerIdAndEpoch last{batches.back().producer_id, batches.back().producer_epoch};
  identity_.advance_to(last);
  identity_.set_state(IdentityState::kReady, "restored from the spool: producer id " + std::to_string(last.id.value) +
                                                 ", epoch " + std::to_string(last.epoch.value));
  journaling_.restored_identity(last);
  bumper_.require_new_id();
  sender_.set_new_batches_held(true);
  replay_ = Replay::kReplaying;
  spdlog::info(
      "replaying {} batches from the spool under {} producer identities; no new sequence starts until "
      "every one is resolved",
      batches.size(), identities.size());
  wake();
}

// A batch exactly as journaled: producer id, epoch, base sequence and
// records; its last attempt's outcome is unknown, so it is resent as a
// retry, in sequence order, and a broker that has it answers it as a
// duplicate.
void IdempotentProducer::restore_batch(RestoredBatch& restored, std::int64_t now) {
  PartitionState& p = state_for(restored.tp);
  p.touch(now);
  ProducerBatch from;
  from.tp = restored.tp;
  from.created_ms = now;
  from.attempts = 1;
  from.ever_ambiguous = true;
  from.producer_id = restored.producer_id;
  from.producer_epoch = restored.producer_epoch;
  from.durable = true;
  from.restored = true;
  std::vector<BatchPiece> pieces;
  for (RestoredRun& r : restored.runs) {
    auto tracker = accumulator_.admit(std::move(r.run), std::move(r.done), now);
    const auto count = static_cast<std::uint32_t>(tracker->run.records.size());
    if (count == 0) continue;  // answered on the next poll
    tracker->records_batched = count;
    tracker->batched_in = &p;
    pieces.push_back(BatchPiece{std::move(tracker), 0, count, 0});
  }
  BatchPtr batch = rebuild_batch(from, pieces, restored.base_sequence, config_.compression, memory_);
  batch->journal_id = restored.journal_id;
  batch->journal_replaces = kNoJournalId;
  batch->journal_due = false;
  batch->retry_at_ms = 0;
  if (batch->record_count != restored.record_count) {
    spdlog::error("{}: restored batch seq {} holds {} records, but {} were journaled: the broker cannot match it",
                  restored.tp.to_string(), restored.base_sequence, batch->record_count, restored.record_count);
  }
  p.restore(batch);
}

bool IdempotentProducer::restored_outstanding() const {
  return std::any_of(partitions_.begin(), partitions_.end(), [](const auto& entry) {
    const auto& unacked = entry.second->unacked();
    return std::any_of(unacked.begin(), unacked.end(), [](const BatchPtr& b) { return b->restored; });
  });
}

// Every restored batch resolved: the producer moves to a fresh sequence
// space (a new producer id, or the next epoch of one this process was
// given), and only then do new batches start. Called before and after the
// bump in poll(), so a move done in that poll releases new batches at once.
void IdempotentProducer::follow_replay() {
  if (replay_ == Replay::kReplaying && !restored_outstanding()) {
    spdlog::info("every batch replayed from the spool is resolved: moving to a fresh producer identity");
    bumper_.request_epoch_change("spool_replay");
    replay_ = Replay::kMoving;
  }
  if (replay_ == Replay::kMoving && !bumper_.requested() && identity_.ready()) {
    replay_ = Replay::kNone;
    sender_.set_new_batches_held(false);
  }
}

// A restored batch of a partition that no longer exists upstream (or that
// this producer may not write) could never be resolved, and would hold
// every new batch: it fails, journaled as failed.
void IdempotentProducer::fail_restored(PartitionState& p, ErrorCode error, const std::string& message) {
  const std::vector<BatchPtr> unacked(p.unacked().begin(), p.unacked().end());
  for (const BatchPtr& b : unacked) {
    if (b->restored && b->state != BatchState::kInFlight) completion_.fail(p, b, error, message);
  }
}

void IdempotentProducer::wake() {
  if (wakeup_) wakeup_();
}

PartitionState& IdempotentProducer::state_for(const TopicPartition& tp) {
  auto& slot = partitions_[tp];
  if (!slot) {
    slot = std::make_unique<PartitionState>(tp);
    idle_.resume(*slot);  // a retired partition in use again
    // A partition first used after its topic's metadata arrived starts from it.
    if (const PartitionLeadership* l = topics_.partition(tp)) slot->set_leader(l->leader_id, l->leader_epoch);
    follow_topic_id(*slot, topics_.topic_id(tp.topic));  // a memo of a topic since re-created restarts
    if (auto limit = topic_batch_limits_.find(tp.topic); limit != topic_batch_limits_.end()) {
      slot->set_batch_limit_bytes(limit->second);
    }
  }
  return *slot;
}

void IdempotentProducer::set_topic_batch_limit(const std::string& topic, std::size_t bytes) {
  topic_batch_limits_[topic] = bytes;
  for (auto& [tp, p] : partitions_) {
    if (tp.topic == topic) p->set_batch_limit_bytes(bytes);
  }
  wake();  // a partition may now hold a full batch
}

const PartitionState* IdempotentProducer::partition(const TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second.get();
}

RunTicket IdempotentProducer::submit(const std::string& topic, std::int32_t partition, RecordRun run,
                                     RunCompletion done) {
  auto tracker = accumulator_.admit(std::move(run), std::move(done), clock_.now_ms());
  RunTicket ticket;
  if (!tracker->run.records.empty()) {
    PartitionState& p = state_for(TopicPartition{topic, partition});
    p.touch(clock_.now_ms());
    ticket = tracker;
    accumulator_.enqueue(p, std::move(tracker));
    if (!topics_.find(topic) || p.leader_id() < 0) upstream_.request_metadata({topic});
  }
  wake();
  return ticket;
}

WithdrawOutcome IdempotentProducer::withdraw(const RunTicket& ticket) {
  const std::shared_ptr<RunTracker> run = ticket.lock();
  if (!run) return WithdrawOutcome::kEnded;
  WithdrawOutcome outcome = accumulator_.withdraw(*run);
  if (outcome == WithdrawOutcome::kInFlight) outcome = refused_.withdraw(*run);
  if (outcome == WithdrawOutcome::kWithdrawn) wake();  // the partition's head may have changed
  return outcome;
}

// Runs that can never be sent fail here, in poll(), so `done` never runs
// inside submit(): the producer is fatal, or metadata says the topic or
// partition does not exist upstream.
void IdempotentProducer::fail_unroutable() {
  for (auto& [tp, p] : partitions_) {
    if (p->queued_runs().empty() && replay_ != Replay::kReplaying) continue;
    if (identity_.state() == IdentityState::kFatal) {
      accumulator_.fail_queued(*p, identity_.fatal_error(), "the producer is in a fatal state", DurableRuns::kAbort);
      continue;
    }
    const TopicLeadership* topic = topics_.find(tp.topic);
    if (!topic) continue;
    const ErrorCode error = topic->error;
    if (error != ErrorCode::kNone && error != ErrorCode::kLeaderNotAvailable) {
      fail_restored(*p, error, "topic error from upstream metadata");
      accumulator_.fail_queued(*p, error, "topic error from upstream metadata", DurableRuns::kGiveUp);
    } else if (error == ErrorCode::kNone && !topics_.partition(tp)) {
      fail_if_still_unknown(*p);
    } else {
      p->set_unknown_since_answer(std::nullopt);
    }
  }
}

// A partition the upstream's answers do not name: one just added
// (CreatePartitions) reaches the brokers' metadata at different times, so it
// is asked about again, and its runs fail only when a later answer, not the
// one that was current when they came, still leaves it out.
void IdempotentProducer::fail_if_still_unknown(PartitionState& p) {
  constexpr std::uint64_t kAnswersToWaitFor = 2;
  const std::uint64_t answers = topics_.answers(p.tp().topic);
  if (!p.unknown_since_answer()) {
    p.set_unknown_since_answer(answers);
    upstream_.request_metadata({p.tp().topic});
    return;
  }
  if (answers < *p.unknown_since_answer() + kAnswersToWaitFor) {
    if (answers > *p.unknown_since_answer()) upstream_.request_metadata({p.tp().topic});
    return;
  }
  p.set_unknown_since_answer(std::nullopt);
  fail_restored(p, ErrorCode::kUnknownTopicOrPartition, "no such partition upstream");
  accumulator_.fail_queued(p, ErrorCode::kUnknownTopicOrPartition, "no such partition upstream", DurableRuns::kGiveUp);
}

void IdempotentProducer::on_metadata(const MetadataUpdate& update) {
  for (const auto& [name, reported] : update.topics) {
    const TopicChanges changes = topics_.apply(name, reported);
    log_topic_changes(name, changes);
    for (auto& [tp, p] : partitions_) {
      if (tp.topic != name) continue;
      follow_topic_id(*p, topics_.topic_id(name));
      // Unknown topics and partitions fail their queued runs in poll().
      if (const PartitionLeadership* l = topics_.partition(tp)) follow_metadata(*p, *l, changes.recreated);
    }
  }
  upstream_.set_leaders_in_use(topics_.leader_nodes());
  wake();
}

// The table has dropped stale epochs already; what is left to decide is
// whether the partition's current leader is news to it.
void IdempotentProducer::follow_metadata(PartitionState& p, const PartitionLeadership& l, bool topic_recreated) {
  if (l.leader_id < 0) {
    p.set_leader(-1, std::max(l.leader_epoch, p.leader_epoch()));
    return;
  }
  if (p.leader_id() < 0 && p.leader_epoch() < 0) {
    p.set_leader(l.leader_id, l.leader_epoch);  // first sight: nothing to reset
    return;
  }
  const bool same = l.leader_id == p.leader_id() && l.leader_epoch == p.leader_epoch();
  const bool newer =
      (l.leader_epoch >= 0 && p.leader_epoch() >= 0) ? l.leader_epoch > p.leader_epoch() : l.leader_id != p.leader_id();
  // A recreated topic starts its epochs again: its lower epoch is news.
  if (newer || (topic_recreated && !same)) responses_.leader_changed(p, l.leader_id, l.leader_epoch);
}

// The first-sequence rule (PIPELINE.md): a partition's log is known by its
// topic's id (KIP-516). Another id means the topic was deleted and created
// again, so the log is new and holds no state for this producer; a broker
// with KAFKA-15591's rule refuses any first sequence there but 0. A sequence
// under way is therefore never continued into it: an epoch bump of the
// partition renumbers what is unacked from 0 (drain-then-bump: nothing goes
// to the partition before it). A partition whose sequence is stale starts at
// 0 anyway (the lazy reset).
void IdempotentProducer::follow_topic_id(PartitionState& p, const Uuid& id) {
  if (id.is_zero() || p.log_id() == id) return;
  if (p.log_id().is_zero()) {
    p.set_log_id(id);  // first sight
    return;
  }
  p.log_replaced(id);
  const bool under_way = p.sequence_owner() == identity_.current() && p.next_sequence() != 0;
  if (!under_way && p.unacked().empty()) return;
  spdlog::info("{}: topic re-created: its sequence restarts at 0 under a new epoch, not at {}", p.tp().to_string(),
               p.next_sequence());
  // Nothing more goes until what went to the old log is back and the bump
  // has renumbered the rest.
  if (p.inflight_batches() > 0) p.set_draining(true);
  bumper_.request(p, "topic_recreated");
}

void IdempotentProducer::log_topic_changes(const std::string& topic, const TopicChanges& changes) const {
  if (changes.recreated) {
    spdlog::warn("topic '{}' has a new topic id: it was deleted and created again", topic);
  }
  for (const auto& lc : changes.leader_changes) {
    spdlog::debug("metadata: {}-{} leader {} (epoch {}) -> {} (epoch {})", topic, lc.partition, lc.old_leader,
                  lc.old_epoch, lc.new_leader, lc.new_epoch);
  }
  if (changes.stale_partitions > 0) {
    spdlog::debug("metadata: ignored {} partitions of '{}' with an older leader epoch", changes.stale_partitions,
                  topic);
  }
}

std::set<std::string> IdempotentProducer::topics_with_partitions() const {
  std::set<std::string> topics;
  for (const auto& [tp, p] : partitions_) topics.insert(tp.topic);
  return topics;
}

void IdempotentProducer::forget_topics(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    topics_.forget(name);
    topic_batch_limits_.erase(name);
  }
  upstream_.set_leaders_in_use(topics_.leader_nodes());
}

void IdempotentProducer::poll() {
  const std::int64_t now = clock_.now_ms();
  accumulator_.finish_deferred();
  fail_unroutable();
  if (identity_.state() == IdentityState::kFatal) return;
  expire(now);
  resolve_sequences();
  follow_replay();
  bumper_.maybe_bump();
  maybe_init_producer_id(now);  // after maybe_bump: an exhausted epoch asks for a new id at once
  follow_replay();              // a move by epoch bump is done now: new batches may start
  if (identity_.ready()) journaling_.identity(identity_.current());  // before any batch is journaled under it
  refused_.rebuild_ready(partitions_);
  if (identity_.ready())
    sender_.drain(partitions_, now, [this, now](OutgoingProduce out) { dispatch(std::move(out), now); });
}

void IdempotentProducer::dispatch(OutgoingProduce out, std::int64_t now) {
  auto req = std::make_shared<InFlightRequest>();
  req->node = out.node;
  req->version = out.version;
  req->sent_ms = now;
  req->batches = std::move(out.batches);
  for (const auto& topic : out.request.topic_data) req->topic_ids.emplace(topic.name, topic.topic_id);
  observer_->on_produce_request(out.node);
  upstream_.send_produce(out.node, out.request, out.version,
                         [this, alive = alive_, req](std::int16_t sent, ProduceResult result) {
                           if (!*alive) return;
                           req->version = sent;
                           responses_.on_produce_result(*req, std::move(result));
                           wake();
                         });
}

std::int64_t IdempotentProducer::next_wakeup_ms() const {
  const std::int64_t now = clock_.now_ms();
  std::int64_t earliest = -1;
  auto consider = [&](std::int64_t t) {
    if (t >= 0 && (earliest < 0 || t < earliest)) earliest = std::max(t, now);
  };
  if (accumulator_.has_deferred()) consider(now);
  if (identity_.state() == IdentityState::kUninitialized) consider(identity_.retry_at_ms());
  for (const auto& [tp, p] : partitions_) {
    const auto& queued = p->queued_runs();
    if (!queued.empty() && !queued.front()->durable())
      consider(queued.front()->enqueued_ms + config_.delivery_timeout_ms);
    for (const auto& b : p->unacked()) {
      if (!b->durable) consider(b->created_ms + config_.delivery_timeout_ms);
    }
    consider(sender_.next_send_ms(*p, now));
  }
  return earliest;
}

// ---- identity ("Producer identity", PIPELINE.md) ----

void IdempotentProducer::maybe_init_producer_id(std::int64_t now) {
  if (!identity_.may_initialize(now)) return;
  identity_.initializing();
  InitProducerIdRequest request;
  request.transactional_id = std::nullopt;  // idempotent only: null, not ""
  request.transaction_timeout_ms = INT32_MAX;
  request.producer_id = kNoProducerId;
  request.producer_epoch = kNoProducerEpoch;
  upstream_.send_init_producer_id(request, [this, alive = alive_](InitProducerIdResult result) {
    if (!*alive) return;
    on_init_producer_id(std::move(result));
    wake();
  });
}

void IdempotentProducer::on_init_producer_id(InitProducerIdResult result) {
  const ErrorCode error = result ? result->error_code : result.error();
  if (error == ErrorCode::kClusterAuthorizationFailed || error == ErrorCode::kUnsupportedVersion) {
    fatal(error);
    return;
  }
  if (error != ErrorCode::kNone) {
    identity_.initialization_failed(error, clock_.now_ms(), retry_backoff_ms(config_, identity_.failed_attempts() + 1));
    return;
  }
  const ProducerIdAndEpoch fresh{result->producer_id, result->producer_epoch};
  identity_.ready_with(fresh);
  bumper_.on_new_producer_id(fresh);
}

void IdempotentProducer::fatal(ErrorCode error) {
  identity_.fail(error);
  completion_.abort_all(error);
}

// ---- "Delivery timeout and unresolved sequences" (PIPELINE.md) ----

void IdempotentProducer::expire(std::int64_t now) {
  std::set<std::int32_t> reset_nodes;
  for (auto& [tp, p] : partitions_) {
    accumulator_.expire_queued(*p, now);
    const std::vector<BatchPtr> unacked(p->unacked().begin(), p->unacked().end());
    for (const auto& b : unacked) {
      // A durable batch is on disk, replayed after a restart: it never expires.
      if (b->durable || now - b->created_ms < config_.delivery_timeout_ms) continue;
      if (b->state == BatchState::kInFlight) {
        reset_nodes.insert(b->sent_to_node);  // its failure comes back as NETWORK_EXCEPTION
        continue;
      }
      spdlog::warn("{}: batch seq {}..{} expired after {} attempts; outcome unknown", tp.to_string(), b->base_sequence,
                   b->last_sequence(), b->attempts);
      completion_.expire_sent(*p, b);
    }
  }
  for (std::int32_t node : reset_nodes) upstream_.reset_connection(node);
}

void IdempotentProducer::resolve_sequences() {
  for (auto& [tp, p] : partitions_) {
    if (!p->unresolved_next() || !p->unacked().empty() || p->inflight_batches() > 0) continue;
    if (ProducerBatch::wrap_sequence(p->last_acked_sequence(), 1) == p->next_sequence()) {
      spdlog::debug("{}: unresolved sequence resolved (the expired batch was written)", tp.to_string());
      p->clear_unresolved();
    } else if (!bumper_.renumbers(tp)) {
      bumper_.request(*p, "unresolved_sequence");
    }
  }
}

void IdempotentProducer::abort_all(ErrorCode error) {
  completion_.abort_all(error);
}

}  // namespace pp
