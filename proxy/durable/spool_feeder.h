// Feeds the pipeline the client records that are in the spool only
// (docs/design/SPOOL.md, "What recovery yields"): records acknowledged from
// the spool while the producer was over its memory budget or behind a
// backlog, and after a restart the records no batch had taken yet. It reads
// one Records entry at a time back from its segment, on libuv's threadpool
// (read_entry blocks), in the order they were pushed (append order, so each
// partition's order), and submits it to the producer as a durable run only
// while durable runs take less than half the producer's memory budget
// (room_for_durable): however much the spool holds, memory holds at most
// the budget and one entry.
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
#include <deque>
#include <string>

#include "proxy/net/timer.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/spool/spool_writer.h"

namespace pp::durable {

// Records [first_record, end) of Records entry `id` for topic/partition,
// owed to the pipeline.
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

  // Queues `item` behind what is queued; fed when its turn comes and the
  // budget has room.
  void push(FeedItem item);
  // Nothing queued or being read: every owed entry pushed is with the producer.
  bool empty() const { return queue_.empty(); }
  std::size_t backlog() const { return queue_.size(); }
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
  void start_read(const FeedItem& item);
  void finish_read(Job& job);

  uv_loop_t* loop_;
  spool::SpoolWriter& writer_;
  RecordSink& producer_;
  std::deque<FeedItem> queue_;  // front: being read, or next
  Job* job_ = nullptr;          // the read in flight, owned by its threadpool request
  net::Timer retry_;            // while the budget is full
  std::uint64_t fed_ = 0;
};

}  // namespace pp::durable
