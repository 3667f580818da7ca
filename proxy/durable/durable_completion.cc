#include "proxy/durable/durable_completion.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace pp::durable {

RunCompletion durable_completion(std::string topic, std::int32_t partition, std::int64_t records) {
  return [topic = std::move(topic), partition, records](const RunResult& r) {
    // REQUEST_TIMED_OUT comes only from the drain deadline's abort, after
    // the spool was closed: the records stay owed in the spool for the next
    // start, nothing is lost.
    if (r.error == ErrorCode::kNone || r.error == ErrorCode::kRequestTimedOut) return;
    spdlog::warn("spool: {} records acknowledged from the spool for {}-{} failed upstream with {}: {}", records, topic,
                 partition, error_name(r.error), r.error_message);
  };
}

}  // namespace pp::durable
