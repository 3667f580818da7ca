// The proxy's one memory budget (producer.buffer_memory_bytes) and what it is
// charged for, declared by its owner: the pipeline creates it
// (IdempotentProducer) and hands it to the front end through the RecordSink
// (RecordSink::memory_budget()). Everything the proxy holds for its clients
// and the upstream is charged against it ("Bounded everything",
// ARCHITECTURE.md, rules of the house).
//
// Who charges what, and the role that tells the ledger how the bytes come
// back (proxy/base/memory_budget.h):
//
//   use               charged by                              role
//   request_frames    front end: ClientSession                request frames
//   decoded_records   pipeline: Accumulator (queued runs)     draining
//   upstream_batches  pipeline: batches built and rebuilt    draining
//   responses         front end: ClientSession                held
//   client_producers  front end: FrontendContext              held
//   sequence_memos    pipeline: IdlePartitions                held
//   tls_handshakes    front end: ClientHandshakes             held
//
// Draining bytes come back on their own as runs complete or time out, so a
// request that does not fit may wait for them; request frames and draining
// bytes together are what is held for requests. The names are the
// memory_used_bytes{use} labels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/base/memory_budget.h"

namespace pp {

enum class MemoryUse : std::uint8_t {
  kRequestFrames,    // client request bytes, partial ones at their announced size
  kDecodedRecords,   // decompressed bytes, record and header views of queued runs
  kUpstreamBatches,  // encoded batches awaiting their acknowledgement
  kResponses,        // answers not yet written to the client's socket
  kClientProducers,  // idempotent clients' dedup state
  kSequenceMemos,    // what retired partitions keep of their sequences (idle retirement, PIPELINE.md)
  kTlsHandshakes,    // client connections in their TLS handshake, a fixed estimate each
};

// Indexed by MemoryUse.
inline constexpr std::array<MemoryUseInfo, 7> kMemoryUses{{
    {"request_frames", MemoryRole::kRequestFrames},
    {"decoded_records", MemoryRole::kDraining},
    {"upstream_batches", MemoryRole::kDraining},
    {"responses", MemoryRole::kHeld},
    {"client_producers", MemoryRole::kHeld},
    {"sequence_memos", MemoryRole::kHeld},
    {"tls_handshakes", MemoryRole::kHeld},
}};
inline constexpr std::size_t kMemoryUseCount = kMemoryUses.size();

constexpr std::string_view to_string(MemoryUse use) {
  return kMemoryUses[static_cast<std::size_t>(use)].name;
}

using MemoryBudget = BasicMemoryBudget<MemoryUse, kMemoryUses>;
using MemoryCharge = MemoryBudget::Charge;

}  // namespace pp
