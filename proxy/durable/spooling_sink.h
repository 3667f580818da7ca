// The front end's RecordSink when a spool is configured (docs/design/
// SPOOL.md, "Acknowledging from the spool", "Journaled in upstream mode"): a
// decorator in front of the idempotent producer.
//
// A run for a topic whose ack mode is "spool" is written to the spool as one
// Records entry (its records as one RecordBatch v2 with the client's
// identity) and its `done` answers once the entry is durable: no error, base
// offset -1 (the log offset is not known yet). acks=0 runs are spooled the
// same way.
//
// An idempotent client's run (RunClient::producer_id >= 0) for a topic in
// "upstream" mode is journaled the same way, but its `done` waits for the
// upstream's outcome, as any upstream-mode answer does: the entry is what
// lets a restarted proxy replay the run with its upstream identity and
// recognise the client's retry (CLIENT_DEDUP.md, "What holds across a
// restart of the sidecar"). Once durable it is never withdrawn.
//
// Once its entry is durable a run goes to the producer as a durable run
// (RecordRun::durable_entry); or, when durable runs fill their share of the
// producer's memory budget (SpoolFeeder::room_for_durable) or entries
// already wait on disk, it is dropped from memory and the SpoolFeeder reads
// it back when its turn comes, so each partition keeps its order and memory
// its budget.
//
// A spool that is full (spool.max_bytes) or cannot write answers the run
// with NOT_ENOUGH_REPLICAS, the retriable error of the memory budget, and
// flags it withdrawn: nothing of it is in the spool or upstream, so the
// client's retry cannot duplicate it. Other runs of upstream-mode topics (of
// clients without an idempotent identity), and withdraw(), pass straight
// through to the producer.
//
// Loop thread only (the writer's and the producer's).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "proxy/durable/spool_feeder.h"
#include "proxy/net/deferred.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/spool/spool_writer.h"

namespace pp::durable {

class SpoolingSink final : public RecordSink {
 public:
  // Whether records for a topic are acknowledged from the spool.
  using SpooledTopic = std::function<bool(const std::string& topic)>;

  // `writer`, `producer` and `feeder` must outlive the sink.
  SpoolingSink(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer, SpoolFeeder& feeder,
               SpooledTopic spooled);
  ~SpoolingSink() override;
  SpoolingSink(const SpoolingSink&) = delete;
  SpoolingSink& operator=(const SpoolingSink&) = delete;

  RunTicket submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) override;
  WithdrawOutcome withdraw(const RunTicket& ticket) override { return producer_.withdraw(ticket); }
  MemoryBudget& memory_budget() override { return producer_.memory_budget(); }

  // Runs passed straight through and not yet ended: what a drain deadline
  // would lose (journaled runs stay in the spool).
  std::size_t passthrough_in_flight() const { return *passthrough_; }
  // Records entries appended and not yet durable or refused.
  std::size_t appending() const { return appending_; }

 private:
  struct Appending;
  void on_durable(Appending& a, int status, spool::EntryId id);

  spool::SpoolWriter& writer_;
  RecordSink& producer_;
  SpoolFeeder& feeder_;
  SpooledTopic spooled_;
  net::Deferred later_;
  std::shared_ptr<std::size_t> passthrough_ = std::make_shared<std::size_t>(0);
  std::size_t appending_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pp::durable
