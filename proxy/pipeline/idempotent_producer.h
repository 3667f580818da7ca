// The upstream idempotent producer (docs/design/PIPELINE.md, rule by rule): takes record
// runs from the front end, batches them per partition, and delivers them with
// producer id, epoch and per-partition sequences, acks=all, under KIP-1269's
// two-level in-flight check and the first-ack rule. A plain state machine:
// events (submit, metadata, responses) and poll() at a time read from Clock;
// the driver calls poll() after events and at next_wakeup_ms().
//
// The RecordSink facade: it owns the state (partitions, topics, identity, the
// memory budget) and wires the parts that act on it, each lent what it needs:
// the Accumulator (queued runs, batch building), the Sender (what may go now),
// the ResponseHandler (answers), the EpochBumper (bumps and renumbering),
// IdlePartitions (retirement and sequence memos) and BatchCompletion (how a
// sent batch ends). Itself it keeps the producer id's initialization, metadata
// following, delivery timeouts and the hand-over of requests to the upstream.
// Loop thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/batch_completion.h"
#include "proxy/pipeline/batch_journal.h"
#include "proxy/pipeline/clock.h"
#include "proxy/pipeline/epoch_bumper.h"
#include "proxy/pipeline/idle_partitions.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_identity.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/pipeline/refused_batch_withdrawal.h"
#include "proxy/pipeline/response_handler.h"
#include "proxy/pipeline/restored_batch.h"
#include "proxy/pipeline/sender.h"
#include "proxy/pipeline/topic_table.h"
#include "proxy/pipeline/upstream_port.h"

namespace pp {

class IdempotentProducer final : public RecordSink {
 public:
  IdempotentProducer(PipelineConfig config, UpstreamPort& upstream, const Clock& clock,
                     PipelineObserver* observer = nullptr);
  ~IdempotentProducer() override;
  IdempotentProducer(const IdempotentProducer&) = delete;
  IdempotentProducer& operator=(const IdempotentProducer&) = delete;

  // Called when an event made work possible; the driver coalesces it into one
  // poll() soon (never re-entrantly).
  void set_wakeup(std::function<void()> wakeup) { wakeup_ = std::move(wakeup); }

  // Journaling for the spool (docs/design/PIPELINE.md, "Journaling for the
  // spool"): every batch carrying a durable run (RecordRun::durable_entry)
  // is written to `journal` before it is first sent, and again whenever its
  // sequences or boundaries change; its end and every identity change are
  // written too. nullptr (the default): no journal. Not owned; it must
  // outlive the producer. Set before the first submit().
  void set_journal(BatchJournal* journal) { journaling_.set_journal(journal); }
  // The batches a previous process journaled and never saw resolved, in
  // journal order (per partition in sequence order). Called once, before the
  // first poll(): the producer starts under their identity, without
  // InitProducerId, re-sends each with exactly its producer id, epoch, base
  // sequence and record count, and starts no new sequence anywhere until
  // every one of them is resolved; then it moves to a fresh producer id.
  void restore(std::vector<RestoredBatch> batches);

  // Takes a run for topic/partition; `done` runs exactly once, later.
  RunTicket submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) override;
  WithdrawOutcome withdraw(const RunTicket& ticket) override;
  MemoryBudget& memory_budget() override { return memory_; }
  const MemoryBudget& memory_budget() const { return memory_; }
  bool over_memory_budget() const { return memory_.over(); }

  void on_metadata(const MetadataUpdate& update);
  // The topic's max.message.bytes, learned upstream: its batches are built
  // no larger (the smaller of it and producer.batch_bytes).
  void set_topic_batch_limit(const std::string& topic, std::size_t bytes);

  // One sender iteration: producer id, epoch bumps, expiry, draining.
  void poll();
  // The earliest time poll() has timed work (linger, backoff, delivery
  // timeout), or -1 when only an event can make progress.
  std::int64_t next_wakeup_ms() const;

  // Shutdown: send what is queued without waiting for linger.
  void flush() { accumulator_.flush(); }
  // Deadline reached: every run not yet ended fails with `error`.
  void abort_all(ErrorCode error);

  // Everything charged to the one budget, the front end's share included.
  std::size_t buffered_bytes() const { return memory_.used(); }
  bool idle() const { return accumulator_.idle(); }
  IdentityState identity_state() const { return identity_.state(); }
  ErrorCode fatal_error() const { return identity_.fatal_error(); }
  ProducerIdAndEpoch identity() const { return identity_.current(); }

  // Idle retirement (upstream.metadata_max_idle_ms; IdlePartitions):
  // a partition with nothing queued, in flight or unresolved, last given a
  // run before `used_before_ms`, gives up its state; only its sequence memo
  // stays (until an epoch change makes it moot). Returns how many retired.
  std::size_t retire_idle_partitions(std::int64_t used_before_ms) { return idle_.retire(used_before_ms); }
  // Topics with any partition state: the ones metadata must keep following.
  std::set<std::string> topics_with_partitions() const;
  // Forgets topics no partition uses any more (metadata and leadership).
  void forget_topics(const std::vector<std::string>& names);
  std::size_t partition_count() const { return partitions_.size(); }
  std::size_t sequence_memo_count() const { return idle_.memo_count(); }

  // Introspection for tests and metrics.
  const PartitionState* partition(const TopicPartition& tp) const;
  const TopicTable& topics() const { return topics_; }
  void apply_config(const PipelineConfig& config) { config_ = config; }

 private:
  PartitionState& state_for(const TopicPartition& tp);
  void wake();

  // identity: InitProducerId ("Producer identity", PIPELINE.md)
  void maybe_init_producer_id(std::int64_t now);
  void on_init_producer_id(InitProducerIdResult result);
  void fatal(ErrorCode error);

  void fail_unroutable();
  void fail_if_still_unknown(PartitionState& p);
  void follow_metadata(PartitionState& p, const PartitionLeadership& l, bool topic_recreated);
  void follow_topic_id(PartitionState& p, const Uuid& id);
  void log_topic_changes(const std::string& topic, const TopicChanges& changes) const;

  // restore(): one batch, and the move to a fresh identity once all are resolved
  void restore_batch(RestoredBatch& restored, std::int64_t now);
  void follow_replay();
  bool restored_outstanding() const;
  void fail_restored(PartitionState& p, ErrorCode error, const std::string& message);

  // "Delivery timeout and unresolved sequences" (PIPELINE.md)
  void expire(std::int64_t now);
  void resolve_sequences();

  // hands what the Sender assembled to the upstream; the answer goes to the ResponseHandler
  void dispatch(OutgoingProduce out, std::int64_t now);

  PipelineConfig config_;
  UpstreamPort& upstream_;
  const Clock& clock_;
  PipelineObserver default_observer_;
  PipelineObserver* observer_;
  std::function<void()> wakeup_;
  // Replay after a restart: restored batches outstanding, then the move to a
  // fresh identity, then nothing (new batches go again).
  enum class Replay : std::uint8_t { kNone, kReplaying, kMoving };
  Replay replay_ = Replay::kNone;

  ProducerIdentity identity_{*observer_};
  MemoryBudget memory_{config_.buffer_memory_bytes};
  BatchJournaling journaling_{config_, clock_};
  Accumulator accumulator_{config_, *observer_, memory_, journaling_};
  TopicTable topics_;
  Sender sender_{config_, upstream_, accumulator_, identity_, topics_, *observer_, journaling_};

  PartitionMap partitions_;
  std::map<std::string, std::size_t, std::less<>> topic_batch_limits_;
  EpochBumper bumper_{identity_, partitions_, *observer_};
  IdlePartitions idle_{partitions_, identity_, bumper_, memory_};
  BatchCompletion completion_{accumulator_, *observer_, partitions_, journaling_};
  RefusedBatchWithdrawal refused_{config_, accumulator_, memory_};
  ResponseHandler responses_{config_, upstream_, clock_,      *observer_, memory_,     accumulator_,
                             topics_, identity_, partitions_, bumper_,    completion_, journaling_};

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pp
