// The idempotent clients' dedup state, ClientProducers
// (docs/design/CLIENT_DEDUP.md), kept in the spool across restarts
// (docs/design/SPOOL.md, "Client producers"): every segment's checkpoint
// writes a fresh snapshot of it, and a start restores the last snapshot with
// the client records spooled after it, so a client's retry after a restart
// is recognised as a broker would.
//
// The front end and the spool do not know each other: this converts between
// the front end's ClientProducersSnapshot and the spool's
// ClientProducersEntry, and connects the two. Loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proxy/frontend/client_producers.h"
#include "proxy/spool/spool_entry.h"
#include "proxy/spool/spool_index.h"
#include "proxy/spool/spool_writer.h"

namespace pp {

// The largest snapshot written: well inside the spool's largest entry.
inline constexpr std::size_t kMaxSnapshotBytes = std::size_t{16} << 20;

// At most `max_bytes` encoded: producers past it are left out (they restore
// without state, as without a spool), so a snapshot stays a readable entry.
spool::ClientProducersEntry to_spool_entry(const ClientProducersSnapshot& snapshot,
                                           std::size_t max_bytes = kMaxSnapshotBytes);
ClientProducersSnapshot from_spool_entry(const spool::ClientProducersEntry& entry);

// The client batches a restore replays onto the last snapshot, in spool
// order: the client records entries after it, and those before it still
// owed (their batches may have been in flight when it was taken).
std::vector<DurableClientBatch> durable_client_batches(const spool::SpoolIndex& index);

// At start, before the listener serves a client: restores `producers` from
// what recovery found in the spool (`index`, the recovered one). Complete for
// every partition: with a spool every idempotent client's batch is journaled
// as a Records entry before it goes upstream, whatever the topic's ack mode
// (SpoolingSink), so the last snapshot and the entries after it hold each
// partition's state. Returns the number of producers restored.
std::size_t restore_client_state(const spool::SpoolIndex& index, ClientProducers& producers, std::uint64_t now_ms);

// Every new segment's checkpoint then snapshots `producers`, which must
// outlive `writer`'s last commit or be unhooked first
// (set_client_producers_source(nullptr)).
void persist_client_state(spool::SpoolWriter& writer, const ClientProducers& producers);

// The daemon's one call at start, after recovery and before the loop runs
// or the listener serves a client: restores `producers` from the state the
// writer recovered, logs what it restored, and hooks the checkpoints.
void keep_client_state(spool::SpoolWriter& writer, ClientProducers& producers, std::uint64_t now_ms);

}  // namespace pp
