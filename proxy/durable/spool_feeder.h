// Feeds the pipeline the client records that are in the spool only
// (docs/design/SPOOL.md, "What recovery yields"): records acknowledged from
// the spool while the producer was over its memory budget or behind a
// backlog, and after a restart the records no batch had taken yet. It reads
// Records entries back from their segments on libuv's threadpool (read_entry
// blocks), in append order (so each partition's order), and submits them to
// the producer as durable runs only while durable runs take less than half
// the producer's memory budget (room_for_durable).
//
// One read job at a time reads a run of consecutive owed entries of one
// segment: at most kMaxEntriesPerJob entries and kMaxBytesPerJob bytes, and
// no more bytes than the durable share of the budget has room for (at least
// one entry). So however much the spool holds, memory holds at most the
// budget and one entry. As soon as a job's entries are submitted the next
// job starts if there is room; while there is none, the budget is looked at
// again every few milliseconds.
//
// The segment's file descriptor is kept open from job to job while the
// entries owed next are in the same segment. It is closed (on the
// threadpool, as close may free a deleted file's blocks) when the feeder
// looks at what it owes (after every job, and every few milliseconds while
// it waits for room) and finds the next owed entry in another segment, the
// segment deleted (SpoolWriter::segment_path is null), or nothing owed: a
// deleted segment's file is not kept past the job that read it, or past the
// next look at the budget.
//
// It keeps no list of its own: what it owes is a range of entry ids, and
// the spool's index (SpoolIndex::next_unsequenced) says which entries in it
// still have records to send and from which record on. So a backlog costs
// memory only in the index, which holds every owed entry's metadata anyway,
// and an entry resolved meanwhile (failed, or its segment gone), before its
// job starts or while it runs, is skipped.
//
// An entry that cannot be read back (its bytes changed on disk since it was
// written) cannot be delivered: it is logged, and failed in the spool so it
// does not hold its segment for ever.
//
// An entry pushed with an answer (a journaled run whose client waits for the
// upstream's outcome, SpoolingSink) is fed with that answer as its
// completion; if it is not fed (unreadable, resolved or its segment gone
// first), the answer runs on the loop with NOT_ENOUGH_REPLICAS: nothing of it
// was sent. Answers still held when the feeder is destroyed are dropped
// unrun, as the pipeline drops its completions at shutdown.
//
// Threads: every member function runs on the loop thread. A read job's
// threadpool half touches only its Job (the fd handed to it, the locations,
// its results), never the feeder, the writer or the index; the fd is the
// job's while it runs and the feeder's again when its completion runs on
// the loop. Destroying the feeder with a read in flight is safe: the read
// completes on the threadpool, its results are dropped and its fd closed.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "proxy/net/timer.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/spool/spool_writer.h"

namespace pp::durable {

// Records [first_record, end) of Records entry `id` for topic/partition,
// owed to the pipeline: what replay (plan_replay) lists. The feeder itself
// keeps only the id; the rest it reads from the index when the entry's turn
// comes.
struct FeedItem {
  spool::EntryId id = spool::kNoEntry;
  std::string topic;
  std::int32_t partition = 0;
  std::int32_t first_record = 0;
};

class SpoolFeeder {
 public:
  // `writer` (the index of what is owed, the segment files) and `producer`
  // must outlive the feeder.
  SpoolFeeder(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer);
  ~SpoolFeeder();
  SpoolFeeder(const SpoolFeeder&) = delete;
  SpoolFeeder& operator=(const SpoolFeeder&) = delete;

  // Owes the pipeline Records entry `id` (and, behind an earlier push, every
  // entry between: the sink pushes every entry from the first it could not
  // hold until the feeder is empty again, so none between went another way).
  // Ids rise from push to push. Fed when its turn comes and the budget has
  // room, from its first record not yet in a batch.
  void push(spool::EntryId id);
  void push(const FeedItem& item) { push(item.id); }
  // As push(id), and when the entry is fed its run completes with `answer`
  // instead of the spool's bookkeeping (durable_completion).
  void push(spool::EntryId id, RunCompletion answer);
  // Nothing owed or being read: every owed entry pushed is with the producer.
  bool empty() const { return job_ == nullptr && next_ > last_; }
  // Entries owed and not yet fed (walks the index: for tests and tools).
  std::size_t backlog() const;
  // Entries fed to the producer so far.
  std::uint64_t fed() const { return fed_; }
  // Read jobs started so far (each reads one or more entries).
  std::uint64_t jobs() const { return jobs_; }

  // A read job's caps: entries and bytes.
  static constexpr std::size_t kMaxEntriesPerJob = 1024;
  static constexpr std::size_t kMaxBytesPerJob = std::size_t{1} << 20;

  // Whether a durable run may be held in memory now: below half the
  // budget. Durable runs wait for the upstream however long it is away, so
  // they are kept to half, and the other half stays for what the front end
  // holds (request frames, runs being spooled): clients are still read and
  // answered from the spool while the upstream is down.
  static bool room_for_durable(const MemoryBudget& budget) { return budget.used() < budget.limit() / 2; }

  // A read's threadpool job; visible for the implementation's callbacks.
  struct Job;

 private:
  void pump();
  void start_read(const spool::PendingRecords& first, const std::string& path);
  void finish_read(Job& job);
  void feed(Job& job);
  // The completion entry `id` is fed with: its answer, or bookkeeping.
  RunCompletion completion_for(spool::EntryId id, const std::string& topic, std::int32_t partition,
                               std::int64_t records);
  // Runs the answers of entries below `below` that were never fed.
  void answer_unfed(spool::EntryId below, std::string_view why);
  // Closes the kept segment fd, if any, on the threadpool.
  void release_fd();

  uv_loop_t* loop_;
  spool::SpoolWriter& writer_;
  RecordSink& producer_;
  // Owed: the index's entries with ids in [next_, last_] that still have
  // records to sequence; next_ is also the entry being read, if any.
  spool::EntryId next_ = 1;
  spool::EntryId last_ = spool::kNoEntry;
  Job* job_ = nullptr;  // the read in flight, owned by its threadpool request
  // The segment fd kept between jobs (-1: none) and its segment; handed to
  // the next job, which owns it while it runs.
  int fd_ = -1;
  std::uint64_t fd_segment_ = 0;
  std::uint64_t jobs_ = 0;
  net::Timer retry_;  // while the budget is full
  std::uint64_t fed_ = 0;
  std::map<spool::EntryId, RunCompletion> answers_;  // by entry, until fed
};

}  // namespace pp::durable
