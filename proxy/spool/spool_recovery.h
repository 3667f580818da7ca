// Opens a spool directory at start (or offline, for `spool inspect`) and
// recovers it by the rules of docs/design/SPOOL.md, "Recovery": segments are
// read in id order; damage at the end of the last segment is a torn tail,
// cut off (repair mode) and counted; damage in an earlier segment makes it a
// corrupt segment, renamed aside to `<name>.corrupt` and named, its valid
// entries before the damage still used; a segment of a newer format version
// refuses the whole directory. Entries after damage are never read, so a
// corrupt entry is never yielded.
//
// Blocking file I/O: it runs before the loop serves anything (start-up) or
// in the offline tool, never on a serving loop. One segment's bytes are in
// memory at a time; what is kept is the index's metadata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proxy/spool/segment_reader.h"
#include "proxy/spool/spool_index.h"

namespace pp::spool {

struct SegmentFile {
  std::uint64_t id = 0;
  std::string path;
  std::size_t bytes = 0;  // after any truncation
  std::size_t entries = 0;
  EntryId first_id = kNoEntry;
  EntryId last_id = kNoEntry;
  std::int64_t created_ms = 0;
  bool corrupt = false;  // moved aside (now or at an earlier start)
};

struct CorruptRange {
  std::string path;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::string reason;
};

struct RecoveryReport {
  std::vector<SegmentFile> segments;
  // Damage found: torn tails cut this time, corrupt ranges of segments moved
  // aside now or before.
  std::vector<CorruptRange> damage;
  std::size_t torn_bytes = 0;            // cut off the last segment this time
  std::size_t corrupt_bytes = 0;         // in segments moved aside this time
  std::vector<std::string> moved_aside;  // paths, as renamed this time
};

struct RecoveredSpool {
  std::string dir;
  SpoolIndex index;
  RecoveryReport report;
  EntryId last_id = kNoEntry;                  // the writer continues above it
  std::uint64_t last_segment = 0;              // and with segment ids above this
  std::map<std::uint64_t, std::string> paths;  // segment id -> file
};

// "00000000000000000042.seg": ids sort as names.
std::string segment_file_name(std::uint64_t id);
inline constexpr std::string_view kCorruptSuffix = ".corrupt";

class SpoolRecovery {
 public:
  enum class Mode : std::uint8_t {
    kRepair,    // start-up: truncate torn tails, move corrupt segments aside
    kReadOnly,  // inspect: change nothing, report what repair would do
  };

  SpoolRecovery(std::string dir, Mode mode) : dir_(std::move(dir)), mode_(mode) {}

  // The recovered spool, or why the directory is refused (unreadable, a
  // newer format version), naming the file and the reason. A missing
  // directory is an empty spool in read-only mode and created in repair mode.
  std::expected<RecoveredSpool, std::string> run() const;

 private:
  struct Listed {
    std::uint64_t id = 0;
    std::string path;
    bool corrupt = false;
  };
  std::expected<std::vector<Listed>, std::string> list() const;
  std::expected<void, std::string> recover_one(const Listed& file, bool last, RecoveredSpool& out) const;
  // Cuts a torn tail, or moves a corrupt segment aside; the damaged bytes
  // left in the file, or nullopt when the file was removed.
  std::expected<std::optional<std::size_t>, std::string> handle_damage(const Listed& file, bool last,
                                                                       const SegmentScan& scan, std::size_t file_size,
                                                                       SegmentFile& seg, RecoveredSpool& out) const;
  std::expected<void, std::string> cut_tail(const std::string& path, std::size_t keep) const;
  std::expected<std::string, std::string> move_aside(const std::string& path) const;

  std::string dir_;
  Mode mode_;
};

}  // namespace pp::spool
