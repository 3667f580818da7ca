// The one narrow interface through which record runs enter the pipeline
// (docs/design/ARCHITECTURE.md "Where this is going": the pipeline knows nothing of where
// runs come from). The front end, and later an HTTP ingress or a spool, use it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "proxy/base/memory_budget.h"
#include "proxy/pipeline/record_run.h"

namespace pp {

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // `done` runs exactly once, never inside submit().
  virtual void submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) = 0;

  // Back-pressure (rule of the house 5): the one budget the sink charges its
  // runs and batches to, and the caller charges what it holds for them
  // (request frames, responses). At or over it, the caller stops reading
  // from its clients until its available listener fires (90% of the limit).
  virtual MemoryBudget& memory_budget() = 0;
};

}  // namespace pp
