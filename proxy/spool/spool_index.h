// What the spool still owes (docs/design/SPOOL.md, "What recovery yields",
// "Deleting segments"): fed every durable entry in order, it keeps only the
// unresolved ones' metadata (never record bytes): client records not yet
// acknowledged or failed, with how far each is sequenced; batches sequenced
// and not resolved, with their identity; the last producer identity and
// cluster view; and per segment how many unresolved entries it holds, so the
// oldest segments can be deleted once nothing in them is owed.
// Recovery fills one from the segments; the writer keeps one current as its
// appends become durable. Not thread-safe; one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "proxy/spool/spool_entry.h"

namespace pp::spool {

// Where an entry's bytes are: its segment, offset and encoded size.
struct EntryLocation {
  std::uint64_t segment = 0;
  std::size_t offset = 0;
  std::size_t size = 0;
};

// Client records still owed: records [first_unsequenced, record_count) have
// no batch yet (none when equal).
struct PendingRecords {
  EntryId id = kNoEntry;
  std::int64_t time_ms = 0;
  EntryLocation location;
  std::string topic;
  std::int32_t partition = 0;
  std::int16_t acks = -1;
  std::int64_t client_producer_id = -1;
  std::int16_t client_producer_epoch = -1;
  std::int32_t client_base_sequence = -1;
  std::int32_t record_count = 0;
  std::int32_t first_unsequenced = 0;
};

// A batch sequenced and not resolved: replayed with exactly this identity.
struct PendingBatch {
  EntryId id = kNoEntry;
  std::uint64_t segment = 0;
  std::int64_t time_ms = 0;
  SequencedEntry batch;
};

// A Records entry of an idempotent client (client producer id >= 0): the
// batch its dedup state is rebuilt from after a restart.
struct ClientRecord {
  EntryId id = kNoEntry;
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t producer_id = -1;
  std::int16_t epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t record_count = 0;
  bool operator==(const ClientRecord&) const = default;
};

// Memory: the index keeps per owed Records entry one small fixed-size slot
// (its location, client sequence, record count and an interned "source":
// topic, partition, acks and client producer id and epoch, shared by the
// entries of one client producer and partition); topic names are held once
// per topic. Sequencing progress, batches, segments and client records are
// kept only while something is in flight, per segment, or bounded per client
// producer and partition. memory_bytes() estimates it all.
class SpoolIndex {
 public:
  // Applies one durable entry read from or written to `location`. Entries
  // must come in id order. References to entries no longer held (resolved,
  // or in a deleted segment) are ignored.
  void apply(const Entry& entry, const EntryLocation& location);
  // Bytes of a segment that are not entries (its header, damage kept).
  void add_segment_bytes(std::uint64_t segment, std::size_t bytes);

  // Records with something not yet sequenced, in append order.
  std::vector<PendingRecords> unsequenced_records() const;
  // Every unresolved client records entry, in append order.
  std::vector<PendingRecords> unresolved_records() const;
  // Batches sequenced and unresolved, in sequencing order (so per partition
  // in sequence order).
  std::vector<PendingBatch> unresolved_batches() const;
  // The unresolved records entry `id` (first_unsequenced 0), or null. Built
  // on demand into storage the index keeps: the pointee is valid until the
  // next call of records() or the next change to the index.
  const PendingRecords* records(EntryId id) const;
  // The first records entry with an id in [from, through] that still has
  // records to sequence (neither all in batches nor failed), with
  // first_unsequenced where they start; none when there is none. A walk in
  // append order without a list of its own (SpoolFeeder).
  std::optional<PendingRecords> next_unsequenced(EntryId from, EntryId through) const;
  // How many entries next_unsequenced would walk over in [from, through].
  std::size_t count_unsequenced(EntryId from, EntryId through) const;

  const std::optional<IdentityEntry>& identity() const { return identity_; }
  const std::optional<ClusterViewEntry>& cluster_view() const { return cluster_view_; }
  // The last client producers snapshot and its entry id (kNoEntry: none).
  const std::optional<ClientProducersEntry>& client_producers() const { return client_producers_; }
  EntryId client_producers_id() const { return client_producers_id_; }
  // Idempotent clients' Records entries after the last snapshot, in id
  // order: per client producer and partition its last
  // kClientRecordsPerPartition. Entries voided or failed (directly or
  // through a batch) are left out: what they carried is not delivered.
  std::vector<ClientRecord> client_records() const;
  static constexpr std::size_t kClientRecordsPerPartition = 64;

  // The oldest segments, in order, that hold nothing unresolved and are
  // older than `active` (never the active one); forgotten by the index, to
  // be deleted by the caller. Only a prefix: a resolution in a later segment
  // may refer to an earlier one, so segments go oldest first.
  std::vector<std::uint64_t> take_deletable(std::uint64_t active);

  std::size_t bytes() const;
  std::size_t segment_bytes(std::uint64_t segment) const;
  std::size_t unresolved_in_segment(std::uint64_t segment) const;
  std::int64_t unresolved_record_count() const { return unresolved_record_count_; }
  // Append time of the oldest unresolved records entry, if any.
  std::optional<std::int64_t> oldest_record_ms() const;
  std::vector<std::uint64_t> segments() const;

  // An estimate of the heap bytes the index holds (its containers, nodes,
  // strings and the snapshots it keeps), as glibc's allocator would count
  // them with its chunk overhead; not what the allocator keeps freed. O(1):
  // kept current by every change. For a gauge and for bounding memory; it
  // is not exact (container growth policies are approximated), and it is
  // meant to track the allocator's count within a quarter.
  std::size_t memory_bytes() const;

 private:
  struct Coverage {
    EntryId batch = kNoEntry;
    std::int32_t end = 0;
  };
  // An owed Records entry. Slots are kept in id order; a resolved one is
  // marked gone and removed once it reaches the front or when gone slots
  // are the majority.
  struct RecordsSlot {
    EntryId id = kNoEntry;
    std::int64_t time_ms = 0;
    std::uint64_t segment = 0;
    std::uint64_t offset = 0;
    std::uint32_t size : 31 = 0;  // an entry is at most kMaxEntryBytes
    std::uint32_t gone : 1 = 0;
    std::uint32_t source = 0;  // index into sources_
    std::int32_t client_base_sequence = -1;
    std::int32_t record_count = 0;
  };
  // How far the batches have taken a Records entry; only for entries some
  // batch has covered. Most are covered by one unresolved batch at a time,
  // kept inline.
  struct Progress {
    Coverage live;                                // an unresolved batch's range; batch kNoEntry: none
    std::unique_ptr<std::vector<Coverage>> more;  // further ones, only while `live` is set
    std::int32_t resolved_end = 0;                // furthest end of a resolved batch's range
    std::int32_t done = 0;                        // records in resolved batches
    bool failed_rest = false;                     // what is unsequenced was failed directly
  };
  // What the entries of one client producer on one partition share; held
  // while a Records slot or a kept client record refers to it.
  struct Source {
    std::uint32_t topic = 0;  // index into topics_
    std::int32_t partition = 0;
    std::int64_t client_producer_id = -1;
    std::int16_t acks = -1;
    std::int16_t client_producer_epoch = -1;
    std::uint32_t refs = 0;
  };
  using SourceKey = std::tuple<std::uint32_t, std::int32_t, std::int64_t, std::int16_t, std::int16_t>;
  struct Topic {
    std::string name;
    std::uint32_t refs = 0;  // sources and batches naming it
  };
  // A Sequenced entry not resolved: its identity, its topic held in topics_.
  struct BatchState {
    std::uint64_t segment = 0;
    std::int64_t time_ms = 0;
    std::int64_t producer_id = -1;
    EntryId supersedes = kNoEntry;
    std::uint32_t topic = 0;
    std::int32_t partition = 0;
    std::int32_t base_sequence = 0;
    std::int32_t record_count = 0;
    std::int16_t producer_epoch = -1;
    std::vector<RecordRange> ranges;
  };
  struct SegmentState {
    std::size_t bytes = 0;
    std::size_t unresolved = 0;
  };
  // A kept client record: its entry, source and sequences.
  struct KeptClient {
    EntryId id = kNoEntry;
    std::uint32_t source = 0;
    std::int32_t base_sequence = -1;
    std::int32_t record_count = 0;
  };
  // Client producer id, topic (index into topics_), partition.
  using ClientKey = std::tuple<std::int64_t, std::uint32_t, std::int32_t>;

  void add_records(const Entry& entry, const RecordsEntry& records, const EntryLocation& location);
  void add_batch(const Entry& entry, const SequencedEntry& batch, const EntryLocation& location);
  void resolve(const ResolvedEntry& resolved);
  // Removes a batch; `resolved` false: superseded or voided (its records are
  // unsequenced again), else resolved.
  void drop_batch(EntryId id, bool resolved);
  void maybe_finish_records(EntryId id);
  void remove_records(RecordsSlot& slot);
  void compact_records();
  RecordsSlot* find_records(EntryId id);
  const RecordsSlot* find_records(EntryId id) const;
  Progress* find_progress(EntryId id);
  const Progress* find_progress(EntryId id) const;
  Progress& progress_of(EntryId id);
  void erase_progress(EntryId id);
  void add_coverage(Progress& p, const Coverage& c);
  void remove_coverage(Progress& p, EntryId batch);
  std::int32_t sequenced_end(const RecordsSlot& r) const;
  PendingRecords pending_of(const RecordsSlot& r) const;
  // `r`'s records not yet in a batch, from its first unsequenced one; nullopt
  // when none are owed (all sequenced, or the rest failed).
  std::optional<PendingRecords> unsequenced_part(const RecordsSlot& r) const;
  void release(std::uint64_t segment);
  std::uint32_t hold_source(const RecordsEntry& records);
  void release_source(std::uint32_t source);
  std::uint32_t hold_topic(const std::string& name);
  void release_topic(std::uint32_t topic);
  void add_client_record(EntryId id, std::uint32_t source, const RecordsEntry& records);
  void drop_client_record(EntryId id);
  void clear_client_records();
  void fail_client_records(EntryId batch);

  std::deque<RecordsSlot> records_;
  std::size_t records_gone_ = 0;  // slots marked gone
  std::size_t records_peak_ = 0;  // most slots since the deque was last shrunk
  std::unordered_map<EntryId, Progress> progress_;
  std::vector<Source> sources_;
  std::vector<std::uint32_t> free_sources_;
  std::map<SourceKey, std::uint32_t> source_ids_;
  std::vector<Topic> topics_;
  std::vector<std::uint32_t> free_topics_;
  std::map<std::string, std::uint32_t, std::less<>> topic_ids_;
  std::map<EntryId, BatchState> batches_;
  std::map<std::uint64_t, SegmentState> segments_;
  std::optional<IdentityEntry> identity_;
  std::optional<ClusterViewEntry> cluster_view_;
  std::optional<ClientProducersEntry> client_producers_;
  EntryId client_producers_id_ = kNoEntry;
  std::map<ClientKey, std::vector<KeptClient>> client_records_;
  std::map<EntryId, ClientKey> client_record_keys_;
  std::int64_t unresolved_record_count_ = 0;
  mutable PendingRecords looked_up_;  // what records() returned last
  // Heap bytes of what memory_bytes() does not derive from container sizes:
  // topic names, progress' further coverage, batches' contents, client
  // records' vectors.
  std::size_t tracked_bytes_ = 0;
  std::size_t view_bytes_ = 0;       // the cluster view's contents
  std::size_t producers_bytes_ = 0;  // the client producers snapshot's contents
};

}  // namespace pp::spool
