// Reads one segment's bytes (docs/design/SPOOL.md, "Recovery"): the header,
// then entries one after the other until the end or the first entry that is
// not whole and valid (a size past the end or over kMaxEntryBytes, a CRC-32C
// mismatch, a body that does not decode, an entry id not above the one
// before). Nothing after that point is trusted: a reader never skips over
// damage to find later entries, so a corrupt entry is never delivered.
// Pure: bytes in, entries out; no files. Any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/spool/spool_entry.h"
#include "proxy/spool/spool_format.h"

namespace pp::spool {

struct SegmentScan {
  HeaderResult header;                // header.problem set: no entry was read
  std::size_t entries = 0;            // valid entries passed to the callback
  std::size_t valid_bytes = 0;        // the header and every valid entry: where a truncation would cut
  std::size_t invalid_bytes = 0;      // bytes after valid_bytes (torn or corrupt)
  std::optional<std::string> damage;  // why reading stopped before the end, if it did
  EntryId last_id = kNoEntry;
};

class SegmentReader {
 public:
  // Called for each valid entry in order with its offset and encoded size.
  // The entry's RecordsEntry::batch borrows from the scanned bytes.
  using OnEntry = std::function<void(const Entry&, std::size_t offset, std::size_t size)>;

  // `min_id`: entry ids must be above it (the last id of the previous
  // segment), so entries out of order across segments count as damage.
  explicit SegmentReader(EntryId min_id = kNoEntry) : min_id_(min_id) {}

  SegmentScan scan(ByteView bytes, const OnEntry& on_entry) const;

 private:
  EntryId min_id_;
};

}  // namespace pp::spool
