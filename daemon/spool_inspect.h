// `produce-proxy spool inspect DIR` (docs/design/INTERFACES.md, "Command
// line"): reads a spool directory offline, read-only (nothing is cut, moved
// or created), and prints its segments, what recovery would cut or move
// aside, the producer identity, batches and records owed per partition,
// every unresolved batch with its identity, the oldest record's age, and
// the idempotent clients' dedup state a start would restore (the last
// snapshot and the client records after it).
// Safe to run beside a running proxy: it only reads.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace pp {

// Returns 0 after printing the report to `out`, or 1 with the reason on
// `err` when the directory is refused (unreadable, a newer format version).
// `now_ms` is the wall clock the ages are measured against.
int spool_inspect(const std::string& dir, std::int64_t now_ms, std::ostream& out, std::ostream& err);

}  // namespace pp
