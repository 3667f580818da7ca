// The spool's one writer (docs/design/SPOOL.md, "Writing"): appends entries
// to append-only segments of about `segment_bytes`, and completes each append
// on the loop, by its callback, only once its bytes are durable. Group
// commit: every append queued, from whichever connection, goes in the next
// commit, one write and one fdatasync; a commit starts when the previous one
// is done, but no sooner than `fsync_interval_ms` after the previous one
// started (an idle writer commits at once). With FsyncPolicy::kAlways each
// append has its own commit. The file work (open, pwrite, fdatasync, ftruncate, unlink) runs on
// libuv's threadpool as one job per commit; the loop thread never blocks
// on the disk.
//
// Entry ids are given at commit, in commit order, and handed to the
// callback: a later entry refers to an earlier one only once that one is
// durable (a batch's identity names records already in the spool).
//
// Failures: a write or sync error (ENOSPC, EIO, ...) fails exactly the
// appends of that commit with the libuv error, which callers answer with a
// retriable error; the segment is cut back to what was durable, or, when
// that is not possible or the sync failed, sealed and a new one started, and
// the failed entries are voided by the next commit so a restart never uses
// them. The writer keeps accepting; appends succeed again once the disk
// does. Nothing throws or aborts.
//
// `max_bytes` bounds the spool: a records append that would take the bytes
// on disk and queued past it is refused at once (Refusal::kFull, nothing
// written), and so is one that would leave less than `disk_reserve_bytes`
// free on the file system (as last measured, after each commit or by a
// probe the refusal starts). Identity, sequencing, resolution and
// cluster-view entries are never refused for room: resolutions are what
// free it. While records are refused for the disk and the active segment
// owes nothing, the next commit starts a new segment so the old one can go.
//
// Loop thread only. Destroy only after close() completed, or with nothing
// pending: a commit in flight then finishes on the threadpool and is dropped.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/base/log_limiter.h"
#include "proxy/net/timer.h"
#include "proxy/spool/spool_entry.h"
#include "proxy/spool/spool_index.h"
#include "proxy/spool/spool_observer.h"
#include "proxy/spool/spool_recovery.h"

namespace pp::spool {

enum class FsyncPolicy : std::uint8_t { kGroup, kAlways };

struct SpoolWriterConfig {
  std::size_t max_bytes = std::size_t{1} << 30;
  std::size_t segment_bytes = std::size_t{64} << 20;
  FsyncPolicy fsync = FsyncPolicy::kGroup;
  // Commits start at least this far apart (0: as soon as the previous is done).
  std::uint64_t fsync_interval_ms = 2;
  // Free space on the spool's file system that records appends leave to the
  // entries that free room (sequencing, resolutions, a new segment's
  // checkpoint): without it a disk filled by records could never drain.
  // 0: no check, records fail with ENOSPC when the disk is full.
  std::size_t disk_reserve_bytes = std::size_t{4} << 20;
};

class SpoolWriter {
 public:
  enum class Refusal : std::uint8_t {
    kFull,    // over max_bytes: answer the client with a retriable error
    kClosed,  // close() was called
  };
  // status 0: durable, `id` is the entry's id. Otherwise a negative libuv
  // error (UV_ENOSPC, UV_EIO, ...): not durable, id kNoEntry; retriable.
  using Done = std::function<void(int status, EntryId id)>;

  SpoolWriter(uv_loop_t* loop, SpoolWriterConfig config, RecoveredSpool recovered, SpoolObserver* observer);
  ~SpoolWriter();
  SpoolWriter(const SpoolWriter&) = delete;
  SpoolWriter& operator=(const SpoolWriter&) = delete;

  // Queues `body` (copied) for the next commit. `done` runs on the loop,
  // never from inside append().
  std::expected<void, Refusal> append(const EntryBody& body, Done done);

  // What a new segment's checkpoint writes after the identity and cluster
  // view: a fresh snapshot of the idempotent clients' dedup state
  // (ClientProducersEntry), asked on the loop each time a segment starts.
  // Unset: no snapshot is written. Set it before the first append.
  using ClientProducersSource = std::function<ClientProducersEntry()>;
  void set_client_producers_source(ClientProducersSource source) { client_producers_source_ = std::move(source); }

  // Commits what is queued, closes the segment, then calls `closed`. Later
  // appends are refused.
  void close(std::function<void()> closed);

  // What is durable: the entries owed, the last identity, per segment.
  const SpoolIndex& index() const { return index_; }
  // Bytes on disk plus bytes queued or being written.
  std::size_t bytes_used() const;
  std::uint64_t active_segment() const { return segment_; }
  // Records are refused because the file system is down to its reserve
  // (SpoolWriterConfig::disk_reserve_bytes).
  bool disk_low() const { return disk_low_; }
  // The last commit failed (a disk error); false again after one succeeds.
  bool failing() const { return failing_; }
  // The file of segment `id` (for read_entry), or nullptr once deleted.
  const std::string* segment_path(std::uint64_t id) const {
    const auto it = paths_.find(id);
    return it == paths_.end() ? nullptr : &it->second;
  }

  // A commit's file work, run on the threadpool. Visible for the
  // implementation's callbacks.
  struct Job;

 private:
  struct Pending {
    std::size_t offset = 0;  // in pending_bytes_, then in its commit's buffer
    std::size_t size = 0;
    Entry entry;  // a records entry's batch is cleared: the index keeps no record bytes
    Done done;
  };

  void schedule();
  void start_commit();
  void fill_group(Job& job);
  std::size_t take_group(bool roll) const;
  void add_checkpoint(Job& job);
  void add_entry(Job& job, const Entry& entry);
  void take_pending(Job& job, std::size_t n);
  void finish(Job& job);
  void finish_ok(Job& job);
  void finish_failed(Job& job);
  void delete_resolved_segments();
  bool refused_for_disk();
  bool roll_for_room() const;
  void report_usage();

  uv_loop_t* loop_;
  SpoolWriterConfig config_;
  SpoolObserver* observer_;
  SpoolObserver null_observer_;
  std::string dir_;
  SpoolIndex index_;
  std::map<std::uint64_t, std::string> paths_;
  EntryId next_id_;
  std::uint64_t next_segment_;

  int fd_ = -1;  // the active segment; -1: the next commit starts one
  std::uint64_t segment_ = 0;
  std::size_t segment_size_ = 0;  // bytes durable in it

  // Appends queued for the next commit, encoded without their CRC (the
  // commit's job seals them on the threadpool). A commit that takes all of
  // them takes this buffer whole, and hands its own back once written
  // (spare_bytes_), so record bytes are copied once on the loop.
  Bytes pending_bytes_;
  Bytes spare_bytes_;
  std::vector<Pending> pending_;
  std::uint64_t last_commit_ms_ = 0;  // loop time the last commit with entries started
  std::vector<EntryId> to_void_;
  std::vector<std::string> to_unlink_;

  Job* job_ = nullptr;  // the commit in flight, owned by the threadpool request
  std::size_t in_flight_bytes_ = 0;
  bool failing_ = false;  // the last commit failed: the next success is logged
  // Free bytes of the spool's file system after the last commit (or at start).
  std::optional<std::uint64_t> disk_free_;
  bool disk_low_ = false;           // records were refused for the reserve
  bool probe_disk_ = false;         // a commit is wanted only to measure the disk
  std::size_t checkpoint_end_ = 0;  // the active segment's size after its checkpoint
  LogLimiter write_errors_{std::chrono::seconds(10)};
  LogLimiter disk_low_log_{std::chrono::seconds(10)};
  bool closing_ = false;
  std::function<void()> on_closed_;
  ClientProducersSource client_producers_source_;
  net::Timer timer_;
};

}  // namespace pp::spool
