// The one narrow interface through which record runs enter the pipeline
// (docs/design/ARCHITECTURE.md, "Where this is going": the pipeline knows
// nothing of where runs come from). The front end, and later an HTTP ingress
// or a spool, use it. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/record_run.h"

namespace pp {

struct RunTracker;

// A submitted run, for withdraw(). It does not keep the run alive; an empty
// ticket (nothing to send) withdraws as kEnded.
using RunTicket = std::weak_ptr<RunTracker>;

// What withdraw() found.
enum class WithdrawOutcome : std::uint8_t {
  kWithdrawn,  // none of its records had gone out: taken back, never to be sent
  kInFlight,   // some records are in an upstream batch: it runs to its end
  kEnded,      // its `done` has run (or is queued to run) already
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // `done` runs exactly once, never inside submit().
  virtual RunTicket submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) = 0;

  // The submitter will not wait any longer for the run (its client's
  // deadline). If none of its records has been put in an upstream batch, the
  // run is taken out of its partition's queue, its memory is released, and
  // its `done` runs inside this call with NOT_ENOUGH_REPLICAS (retriable,
  // not appended; RunResult::withdrawn). The runs of the same origin queued
  // behind it in that partition are withdrawn the same way in this call,
  // right after it and in their order, so the client hears every failure
  // before it can send anything in reply, and its retry of the withdrawn run
  // never lands behind records it sent after it. Runs ahead of it and other
  // origins' runs keep their places. A run with records in flight is left
  // alone: it ends as it would have. A run with a durable copy
  // (RecordRun::durable_entry) is on disk, to be delivered whatever its
  // client does, and is never withdrawn: kInFlight.
  virtual WithdrawOutcome withdraw(const RunTicket& ticket) = 0;

  // Back-pressure (ARCHITECTURE.md, "Bounded everything"): the one budget the
  // sink charges its runs and batches to, and the caller charges what it
  // holds for them (request frames, responses). At or over it, the caller
  // stops reading from its clients until its available listener fires
  // (MemoryBudget's resume mark).
  virtual MemoryBudget& memory_budget() = 0;
};

}  // namespace pp
