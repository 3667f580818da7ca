// A RecordRun over test values, as the front end would hand one to the
// pipeline: the run keeps its values alive, every record has a CreateTime.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxy/pipeline/record_run.h"
#include "proxy/records/record.h"

namespace pp::testing {

inline RecordRun run_of(std::shared_ptr<std::vector<std::string>> values) {
  RecordRun run;
  for (const auto& v : *values) {
    RunRecord r;
    r.timestamp_ms = 1700000000000;
    r.value = as_bytes(v);
    run.records.push_back(r);
    run.size_bytes += v.size();
  }
  run.storage = std::move(values);
  return run;
}

}  // namespace pp::testing
