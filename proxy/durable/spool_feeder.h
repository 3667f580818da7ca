// Feeds the pipeline the client records that are in the spool only
// (docs/design/SPOOL.md, "What recovery yields"): records acknowledged from
// the spool while the producer was over its memory budget or behind a
// backlog, and after a restart the records no batch had taken yet. It reads
// one Records entry at a time back from its segment, on libuv's threadpool
// (read_entry blocks), in append order (so each partition's order), and
// submits it to the producer as a durable run only while durable runs take
// less than half the producer's memory budget (room_for_durable): however
// much the spool holds, memory holds at most the budget and one entry.
//
// It keeps no list of its own: what it owes is a range of entry ids, and
// the spool's index (SpoolIndex::next_unsequenced) says which entries in it
// still have records to send and from which record on. So a backlog costs
// memory only in the index, which holds every owed entry's metadata anyway,
// and an entry resolved meanwhile (failed, or its segment gone) is skipped.
//
// An entry that cannot be read back (its bytes changed on disk since it was
// written) cannot be delivered: it is logged, and failed in the spool so it
// does not hold its segment for ever.
//
// Loop thread only. Destroying it with a read in flight is safe: the read
// completes on the threadpool and is dropped.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

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
  // Nothing owed or being read: every owed entry pushed is with the producer.
  bool empty() const { return job_ == nullptr && next_ > last_; }
  // Entries owed and not yet fed (walks the index: for tests and tools).
  std::size_t backlog() const;
  // Entries fed to the producer so far.
  std::uint64_t fed() const { return fed_; }

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
  void start_read(const spool::PendingRecords& owed, const std::string& path);
  void finish_read(Job& job);

  uv_loop_t* loop_;
  spool::SpoolWriter& writer_;
  RecordSink& producer_;
  // Owed: the index's entries with ids in [next_, last_] that still have
  // records to sequence; next_ is also the entry being read, if any.
  spool::EntryId next_ = 1;
  spool::EntryId last_ = spool::kNoEntry;
  Job* job_ = nullptr;  // the read in flight, owned by its threadpool request
  net::Timer retry_;    // while the budget is full
  std::uint64_t fed_ = 0;
};

}  // namespace pp::durable
