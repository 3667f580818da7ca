// The one narrow interface through which record runs enter the pipeline
// (docs/design/ARCHITECTURE.md "Where this is going": the pipeline knows nothing of where
// runs come from). The front end, and later an HTTP ingress or a spool, use it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "proxy/pipeline/record_run.h"

namespace pp {

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // `done` runs exactly once, never inside submit().
  virtual void submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) = 0;

  // Back-pressure (rule of the house 5): at or over buffer_memory_bytes, the
  // caller stops reading from its clients...
  virtual bool over_memory_budget() const = 0;
  // ...until this fires, once buffered bytes are back under the low-water
  // mark (90% of the budget).
  virtual void set_memory_available_listener(std::function<void()> listener) = 0;
};

}  // namespace pp
