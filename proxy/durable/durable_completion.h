// The completion of a run handed to the producer with a durable copy
// (RecordRun::durable_entry): its client was answered when the copy became
// durable, so the pipeline's result is bookkeeping only. The pipeline never
// gives such a run up for a retriable reason; a non-retriable failure (the
// topic refused it for good) is logged, and the pipeline has failed its
// records in the spool through the journal.
#pragma once

#include <cstdint>
#include <string>

#include "proxy/pipeline/record_run.h"

namespace pp::durable {

RunCompletion durable_completion(std::string topic, std::int32_t partition, std::int64_t records);

}  // namespace pp::durable
