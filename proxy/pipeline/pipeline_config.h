// The [producer] settings of docs/design/INTERFACES.md that the pipeline itself uses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proxy/base/backoff.h"
#include "proxy/records/compression.h"

namespace pp {

// The window every partition starts at and falls back to on a leader change:
// what brokers before KIP-1269 retain (ProducerStateManager's 5). Not
// configurable: it is the protocol's promise to old brokers.
inline constexpr std::int32_t kInitialWindow = 5;

struct PipelineConfig {
  std::int64_t linger_ms = 5;
  std::size_t batch_bytes = 1048576;
  CompressionCodec compression = CompressionCodec::kNone;
  std::int32_t max_partition_window = 200;
  std::int64_t delivery_timeout_ms = 120000;
  std::int64_t retry_backoff_ms = 100;
  std::int64_t retry_backoff_max_ms = 1000;
  std::size_t buffer_memory_bytes = 67108864;
  std::int32_t request_timeout_ms = 30000;
  // A request stops taking batches past this; one larger batch may go alone.
  std::size_t max_request_bytes = 16 * 1048576;
};

// retry_backoff_ms doubled `doublings` times, at most retry_backoff_max_ms
// (proxy/base/backoff.h, without its reconnect jitter).
inline std::int64_t retry_backoff_ms(const PipelineConfig& c, std::int32_t doublings) {
  return static_cast<std::int64_t>(backoff_ms(static_cast<std::uint64_t>(c.retry_backoff_ms),
                                              static_cast<std::uint64_t>(c.retry_backoff_max_ms), doublings));
}

}  // namespace pp
