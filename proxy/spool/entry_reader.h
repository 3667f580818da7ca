// Reads one entry back from its segment for replay (docs/design/SPOOL.md,
// "What recovery yields"): the index keeps where each owed entry lies, never
// its record bytes, so a replay reads each records entry when it sends it.
// The bytes are checked again (size, CRC-32C, decoding, the id expected):
// a disk that changed them since recovery yields an error, never records.
//
// Blocking pread: call it on libuv's threadpool (uv_queue_work) or before
// the loop serves, never on a serving loop thread. Any thread.
#pragma once

#include <expected>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/spool/spool_entry.h"
#include "proxy/spool/spool_index.h"

namespace pp::spool {

// An entry and the bytes it was decoded from; a RecordsEntry's batch
// borrows `bytes`, so keep them together (moving keeps the view valid).
struct LoadedEntry {
  Bytes bytes;
  Entry entry;
};

// The entry `expected_id` at `location` of the segment file `path`, or why
// not. Opens the file and closes it again.
std::expected<LoadedEntry, std::string> read_entry(const std::string& path, const EntryLocation& location,
                                                   EntryId expected_id);
// The same from `fd`, a descriptor of that segment file opened for reading
// and kept by the caller (a reader of a run of entries opens the segment
// once); `path` only names it in errors. The fd is left open; concurrent
// calls on one fd are safe (pread). The bytes are read into `buffer`
// (resized to the entry's size if it is not that size already), so a caller
// that reads on another thread can allocate them on its own: they are
// freed where they were allocated, and the allocator's per-thread arenas do
// not each keep a drain's worth of pages.
std::expected<LoadedEntry, std::string> read_entry(int fd, const std::string& path, const EntryLocation& location,
                                                   EntryId expected_id, Bytes buffer = {});

}  // namespace pp::spool
