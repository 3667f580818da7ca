#include "proxy/spool/spool_index.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>

#include "proxy/spool/spool_format.h"

namespace pp::spool {

namespace {

// glibc's chunk for a request of `n` bytes: its size word, 16-byte
// alignment, 32 bytes at least.
constexpr std::size_t heap_chunk(std::size_t n) {
  return n == 0 ? 0 : std::max<std::size_t>(32, (n + 8 + 15) & ~std::size_t{15});
}
// A std::map node holding a `value`-byte pair (libstdc++: colour and three
// links before it).
constexpr std::size_t map_node(std::size_t value) {
  return heap_chunk(32 + value);
}
// What a string holds on the heap (libstdc++ keeps up to 15 chars inline).
std::size_t string_heap(const std::string& s) {
  return s.capacity() > 15 ? heap_chunk(s.capacity() + 1) : 0;
}
template <typename T>
std::size_t vector_heap(const std::vector<T>& v) {
  return heap_chunk(v.capacity() * sizeof(T));
}
// libstdc++'s deque allocates blocks of 512 bytes' worth of elements, and a
// map of block pointers that grows by about half again.
template <typename T>
std::size_t deque_heap(std::size_t size) {
  constexpr std::size_t kPerBlock = sizeof(T) < 512 ? 512 / sizeof(T) : 1;
  const std::size_t blocks = size / kPerBlock + 1;
  return blocks * heap_chunk(kPerBlock * sizeof(T)) + heap_chunk(sizeof(void*) * (blocks * 3 / 2 + 8));
}

std::size_t view_heap(const ClusterViewEntry& view) {
  std::size_t n = vector_heap(view.topics);
  for (const TopicPartitions& t : view.topics) n += string_heap(t.topic);
  return n;
}

std::size_t producers_heap(const ClientProducersEntry& snapshot) {
  std::size_t n = vector_heap(snapshot.producers);
  for (const ClientProducerSnapshot& p : snapshot.producers) {
    n += vector_heap(p.partitions);
    for (const ClientPartitionSnapshot& t : p.partitions) n += string_heap(t.topic) + vector_heap(t.batches);
  }
  return n;
}

// The slot of `id` in `slots` (in id order), whether gone or not; null if none.
template <typename Slots>
auto find_slot(Slots& slots, EntryId id) -> decltype(&slots.front()) {
  const auto it =
      std::lower_bound(slots.begin(), slots.end(), id, [](const auto& slot, EntryId v) { return slot.id < v; });
  return it == slots.end() || it->id != id ? nullptr : &*it;
}

// A slot's size field holds any entry's size.
static_assert(kMaxEntryBytes + kEntryFrameBytes < (std::size_t{1} << 31));

}  // namespace

void SpoolIndex::apply(const Entry& entry, const EntryLocation& location) {
  segments_[location.segment].bytes += location.size;
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, RecordsEntry>) {
          add_records(entry, body, location);
        } else if constexpr (std::is_same_v<T, IdentityEntry>) {
          identity_ = body;
        } else if constexpr (std::is_same_v<T, SequencedEntry>) {
          add_batch(entry, body, location);
        } else if constexpr (std::is_same_v<T, ResolvedEntry>) {
          resolve(body);
        } else if constexpr (std::is_same_v<T, ClusterViewEntry>) {
          cluster_view_ = body;
          view_bytes_ = view_heap(*cluster_view_);
        } else {
          client_producers_ = body;
          producers_bytes_ = producers_heap(*client_producers_);
          client_producers_id_ = entry.id;
          clear_client_records();
        }
      },
      entry.body);
}

void SpoolIndex::add_segment_bytes(std::uint64_t segment, std::size_t bytes) {
  segments_[segment].bytes += bytes;
}

void SpoolIndex::add_records(const Entry& entry, const RecordsEntry& records, const EntryLocation& location) {
  if (find_slot(records_, entry.id) != nullptr) return;
  RecordsSlot slot;
  slot.id = entry.id;
  slot.time_ms = entry.time_ms;
  slot.segment = location.segment;
  slot.offset = location.offset;
  slot.size = static_cast<std::uint32_t>(std::min<std::size_t>(location.size, kMaxEntryBytes + kEntryFrameBytes));
  slot.source = hold_source(records);
  slot.client_base_sequence = records.client_base_sequence;
  slot.record_count = records.record_count;
  if (records_.empty() || records_.back().id < entry.id) {
    records_.push_back(slot);
  } else {
    const auto at = std::lower_bound(records_.begin(), records_.end(), entry.id,
                                     [](const RecordsSlot& s, EntryId v) { return s.id < v; });
    records_.insert(at, slot);
  }
  records_peak_ = std::max(records_peak_, records_.size());
  ++segments_[location.segment].unresolved;
  unresolved_record_count_ += records.record_count;
  if (records.client_producer_id >= 0) add_client_record(entry.id, slot.source, records);
}

std::uint32_t SpoolIndex::hold_topic(const std::string& name) {
  auto it = topic_ids_.find(name);
  if (it == topic_ids_.end()) {
    std::uint32_t id = 0;
    if (free_topics_.empty()) {
      id = static_cast<std::uint32_t>(topics_.size());
      topics_.emplace_back();
    } else {
      id = free_topics_.back();
      free_topics_.pop_back();
    }
    topics_[id] = Topic{name, 0};
    it = topic_ids_.emplace(name, id).first;
    tracked_bytes_ += string_heap(topics_[id].name) + string_heap(it->first);
  }
  ++topics_[it->second].refs;
  return it->second;
}

void SpoolIndex::release_topic(std::uint32_t topic) {
  Topic& t = topics_[topic];
  if (--t.refs > 0) return;
  const auto it = topic_ids_.find(t.name);
  tracked_bytes_ -= string_heap(t.name) + string_heap(it->first);
  topic_ids_.erase(it);
  std::string().swap(t.name);
  free_topics_.push_back(topic);
  if (free_topics_.size() == topics_.size()) {
    std::vector<Topic>().swap(topics_);
    std::vector<std::uint32_t>().swap(free_topics_);
  }
}

std::uint32_t SpoolIndex::hold_source(const RecordsEntry& records) {
  const std::uint32_t topic = hold_topic(records.topic);
  const SourceKey key{topic, records.partition, records.client_producer_id, records.acks,
                      records.client_producer_epoch};
  const auto [it, inserted] = source_ids_.try_emplace(key, 0);
  if (!inserted) {
    release_topic(topic);  // a source holds its topic once
    ++sources_[it->second].refs;
    return it->second;
  }
  if (free_sources_.empty()) {
    it->second = static_cast<std::uint32_t>(sources_.size());
    sources_.emplace_back();
  } else {
    it->second = free_sources_.back();
    free_sources_.pop_back();
  }
  sources_[it->second] =
      Source{topic, records.partition, records.client_producer_id, records.acks, records.client_producer_epoch, 1};
  return it->second;
}

void SpoolIndex::release_source(std::uint32_t source) {
  Source& s = sources_[source];
  if (--s.refs > 0) return;
  const std::uint32_t topic = s.topic;
  source_ids_.erase(SourceKey{topic, s.partition, s.client_producer_id, s.acks, s.client_producer_epoch});
  free_sources_.push_back(source);
  if (free_sources_.size() == sources_.size()) {
    std::vector<Source>().swap(sources_);
    std::vector<std::uint32_t>().swap(free_sources_);
  }
  release_topic(topic);
}

void SpoolIndex::add_client_record(EntryId id, std::uint32_t source, const RecordsEntry& records) {
  const ClientKey key{sources_[source].client_producer_id, sources_[source].topic, sources_[source].partition};
  std::vector<KeptClient>& kept = client_records_[key];
  tracked_bytes_ -= vector_heap(kept);
  kept.push_back(KeptClient{id, source, records.client_base_sequence, records.record_count});
  ++sources_[source].refs;
  client_record_keys_.emplace(id, key);
  if (kept.size() > kClientRecordsPerPartition) {
    client_record_keys_.erase(kept.front().id);
    release_source(kept.front().source);
    kept.erase(kept.begin());
  }
  tracked_bytes_ += vector_heap(kept);
}

void SpoolIndex::drop_client_record(EntryId id) {
  const auto key = client_record_keys_.find(id);
  if (key == client_record_keys_.end()) return;
  const auto kept = client_records_.find(key->second);
  if (kept != client_records_.end()) {
    std::vector<KeptClient>& records = kept->second;
    const auto at = std::find_if(records.begin(), records.end(), [&](const KeptClient& k) { return k.id == id; });
    if (at != records.end()) {
      const std::uint32_t source = at->source;
      records.erase(at);
      release_source(source);
    }
    if (records.empty()) {
      tracked_bytes_ -= vector_heap(records);
      client_records_.erase(kept);
    }
  }
  client_record_keys_.erase(key);
}

void SpoolIndex::clear_client_records() {
  for (const auto& [key, kept] : client_records_) {
    tracked_bytes_ -= vector_heap(kept);
    for (const KeptClient& k : kept) release_source(k.source);
  }
  client_records_.clear();
  client_record_keys_.clear();
}

// A batch given up: the client records it carried are not delivered, so
// they are no longer what a client's retry is deduplicated against.
void SpoolIndex::fail_client_records(EntryId batch) {
  const auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  for (const RecordRange& range : it->second.ranges) drop_client_record(range.records);
}

std::vector<ClientRecord> SpoolIndex::client_records() const {
  std::vector<ClientRecord> out;
  out.reserve(client_record_keys_.size());
  for (const auto& [key, kept] : client_records_) {
    for (const KeptClient& k : kept) {
      const Source& s = sources_[k.source];
      out.push_back(ClientRecord{k.id, topics_[s.topic].name, s.partition, s.client_producer_id,
                                 s.client_producer_epoch, k.base_sequence, k.record_count});
    }
  }
  std::sort(out.begin(), out.end(), [](const ClientRecord& a, const ClientRecord& b) { return a.id < b.id; });
  return out;
}

void SpoolIndex::add_batch(const Entry& entry, const SequencedEntry& batch, const EntryLocation& location) {
  if (batch.supersedes != kNoEntry) drop_batch(batch.supersedes, /*resolved=*/false);
  for (const RecordRange& range : batch.ranges) {
    if (find_records(range.records) == nullptr) continue;
    add_coverage(progress_of(range.records), Coverage{entry.id, range.first_record + range.record_count});
  }
  const auto [it, inserted] = batches_.try_emplace(entry.id);
  if (inserted) {
    it->second = BatchState{location.segment,        entry.time_ms,   batch.producer_id,   batch.supersedes,
                            hold_topic(batch.topic), batch.partition, batch.base_sequence, batch.record_count,
                            batch.producer_epoch,    batch.ranges};
    tracked_bytes_ += vector_heap(it->second.ranges);
  }
  ++segments_[location.segment].unresolved;
}

void SpoolIndex::resolve(const ResolvedEntry& resolved) {
  if (resolved.outcome == Outcome::kFailed) fail_client_records(resolved.target);
  if (resolved.outcome != Outcome::kAcknowledged) drop_client_record(resolved.target);
  if (batches_.contains(resolved.target)) {
    drop_batch(resolved.target, resolved.outcome != Outcome::kVoid);
    return;
  }
  if (find_records(resolved.target) == nullptr) return;
  // Records failed or voided before (the rest of) them were sequenced.
  progress_of(resolved.target).failed_rest = true;
  maybe_finish_records(resolved.target);
}

void SpoolIndex::drop_batch(EntryId id, bool resolved) {
  const auto it = batches_.find(id);
  if (it == batches_.end()) return;
  tracked_bytes_ -= vector_heap(it->second.ranges);
  const std::vector<RecordRange> ranges = std::move(it->second.ranges);
  release(it->second.segment);
  release_topic(it->second.topic);
  batches_.erase(it);
  for (const RecordRange& range : ranges) {
    if (find_records(range.records) == nullptr) continue;
    Progress& p = progress_of(range.records);
    remove_coverage(p, id);
    if (resolved) {
      p.done += range.record_count;
      p.resolved_end = std::max(p.resolved_end, range.first_record + range.record_count);
      unresolved_record_count_ -= range.record_count;
    }
    maybe_finish_records(range.records);
  }
}

void SpoolIndex::maybe_finish_records(EntryId id) {
  RecordsSlot* r = find_records(id);
  if (r == nullptr) return;
  const Progress* p = find_progress(id);
  const std::int32_t done = p == nullptr ? 0 : p->done;
  const bool all_done = done >= r->record_count;
  const bool rest_failed = p != nullptr && p->failed_rest && p->live.batch == kNoEntry;
  if (!all_done && !rest_failed) return;
  unresolved_record_count_ -= std::max(0, r->record_count - done);
  release(r->segment);
  remove_records(*r);
}

// Forgets an owed entry: its slot is marked gone, and slots are dropped from
// the front, or all gone ones at once when they are the majority, so a
// lookup stays a binary search over slots mostly owed.
void SpoolIndex::remove_records(RecordsSlot& slot) {
  erase_progress(slot.id);
  release_source(slot.source);
  slot.gone = 1;
  ++records_gone_;
  compact_records();
}

void SpoolIndex::compact_records() {
  while (!records_.empty() && records_.front().gone != 0) {
    records_.pop_front();
    --records_gone_;
  }
  if (records_gone_ > kClientRecordsPerPartition && records_gone_ * 2 > records_.size()) {
    std::erase_if(records_, [](const RecordsSlot& s) { return s.gone != 0; });
    records_gone_ = 0;
  }
  // A deque keeps its map of blocks at its largest: rebuilt once it holds
  // a quarter of its peak.
  if (records_peak_ > 1024 && records_.size() * 4 < records_peak_) {
    std::deque<RecordsSlot> smaller(std::make_move_iterator(records_.begin()), std::make_move_iterator(records_.end()));
    records_.swap(smaller);
    records_peak_ = records_.size();
  }
}

SpoolIndex::RecordsSlot* SpoolIndex::find_records(EntryId id) {
  RecordsSlot* slot = find_slot(records_, id);
  return slot == nullptr || slot->gone != 0 ? nullptr : slot;
}

const SpoolIndex::RecordsSlot* SpoolIndex::find_records(EntryId id) const {
  const RecordsSlot* slot = find_slot(records_, id);
  return slot == nullptr || slot->gone != 0 ? nullptr : slot;
}

SpoolIndex::Progress* SpoolIndex::find_progress(EntryId id) {
  if (progress_.empty()) return nullptr;
  const auto it = progress_.find(id);
  return it == progress_.end() ? nullptr : &it->second;
}

const SpoolIndex::Progress* SpoolIndex::find_progress(EntryId id) const {
  if (progress_.empty()) return nullptr;
  const auto it = progress_.find(id);
  return it == progress_.end() ? nullptr : &it->second;
}

SpoolIndex::Progress& SpoolIndex::progress_of(EntryId id) {
  return progress_[id];
}

void SpoolIndex::erase_progress(EntryId id) {
  const auto it = progress_.find(id);
  if (it == progress_.end()) return;
  if (it->second.more) tracked_bytes_ -= heap_chunk(sizeof(std::vector<Coverage>)) + vector_heap(*it->second.more);
  progress_.erase(it);
  // A hash map keeps its buckets at their most: given back once empty.
  if (progress_.empty() && progress_.bucket_count() > 64) std::unordered_map<EntryId, Progress>().swap(progress_);
}

void SpoolIndex::add_coverage(Progress& p, const Coverage& c) {
  if (p.live.batch == kNoEntry) {
    p.live = c;
    return;
  }
  if (!p.more) {
    p.more = std::make_unique<std::vector<Coverage>>();
    tracked_bytes_ += heap_chunk(sizeof(std::vector<Coverage>));
  }
  tracked_bytes_ -= vector_heap(*p.more);
  p.more->push_back(c);
  tracked_bytes_ += vector_heap(*p.more);
}

// Removes every range of `batch` from `p`; `live` is set while any is left.
void SpoolIndex::remove_coverage(Progress& p, EntryId batch) {
  if (p.more) std::erase_if(*p.more, [&](const Coverage& c) { return c.batch == batch; });
  if (p.live.batch == batch) {
    p.live = Coverage{};
    if (p.more && !p.more->empty()) {
      p.live = p.more->back();
      p.more->pop_back();
    }
  }
  if (p.more && p.more->empty()) {
    tracked_bytes_ -= heap_chunk(sizeof(std::vector<Coverage>)) + vector_heap(*p.more);
    p.more.reset();
  }
}

std::int32_t SpoolIndex::sequenced_end(const RecordsSlot& r) const {
  const Progress* p = find_progress(r.id);
  if (p == nullptr) return 0;
  std::int32_t end = p->resolved_end;
  if (p->live.batch != kNoEntry) end = std::max(end, p->live.end);
  if (p->more) {
    for (const Coverage& c : *p->more) end = std::max(end, c.end);
  }
  return end;
}

void SpoolIndex::release(std::uint64_t segment) {
  const auto it = segments_.find(segment);
  if (it != segments_.end() && it->second.unresolved > 0) --it->second.unresolved;
}

PendingRecords SpoolIndex::pending_of(const RecordsSlot& r) const {
  const Source& s = sources_[r.source];
  return PendingRecords{r.id,
                        r.time_ms,
                        EntryLocation{r.segment, r.offset, r.size},
                        topics_[s.topic].name,
                        s.partition,
                        s.acks,
                        s.client_producer_id,
                        s.client_producer_epoch,
                        r.client_base_sequence,
                        r.record_count,
                        0};
}

std::optional<PendingRecords> SpoolIndex::unsequenced_part(const RecordsSlot& r) const {
  const Progress* p = find_progress(r.id);
  if (p != nullptr && p->failed_rest) return std::nullopt;
  const std::int32_t end = sequenced_end(r);
  if (end >= r.record_count) return std::nullopt;
  PendingRecords out = pending_of(r);
  out.first_unsequenced = end;
  return out;
}

std::vector<PendingRecords> SpoolIndex::unsequenced_records() const {
  std::vector<PendingRecords> out;
  for (const RecordsSlot& r : records_) {
    if (r.gone != 0) continue;
    if (auto part = unsequenced_part(r)) out.push_back(std::move(*part));
  }
  return out;
}

std::vector<PendingRecords> SpoolIndex::unresolved_records() const {
  std::vector<PendingRecords> out;
  out.reserve(records_.size() - records_gone_);
  for (const RecordsSlot& r : records_) {
    if (r.gone != 0) continue;
    out.push_back(pending_of(r));
    out.back().first_unsequenced = sequenced_end(r);
  }
  return out;
}

std::vector<PendingBatch> SpoolIndex::unresolved_batches() const {
  std::vector<PendingBatch> out;
  out.reserve(batches_.size());
  for (const auto& [id, b] : batches_) {
    out.push_back(PendingBatch{id, b.segment, b.time_ms,
                               SequencedEntry{topics_[b.topic].name, b.partition, b.producer_id, b.producer_epoch,
                                              b.base_sequence, b.record_count, b.supersedes, b.ranges}});
  }
  return out;
}

const PendingRecords* SpoolIndex::records(EntryId id) const {
  const RecordsSlot* r = find_records(id);
  if (r == nullptr) return nullptr;
  looked_up_ = pending_of(*r);
  return &looked_up_;
}

std::optional<PendingRecords> SpoolIndex::next_unsequenced(EntryId from, EntryId through) const {
  auto it = std::lower_bound(records_.begin(), records_.end(), from,
                             [](const RecordsSlot& s, EntryId v) { return s.id < v; });
  for (; it != records_.end() && it->id <= through; ++it) {
    if (it->gone != 0) continue;
    if (auto part = unsequenced_part(*it)) return part;
  }
  return std::nullopt;
}

std::size_t SpoolIndex::count_unsequenced(EntryId from, EntryId through) const {
  std::size_t n = 0;
  auto it = std::lower_bound(records_.begin(), records_.end(), from,
                             [](const RecordsSlot& s, EntryId v) { return s.id < v; });
  for (; it != records_.end() && it->id <= through; ++it) {
    if (it->gone == 0 && unsequenced_part(*it)) ++n;
  }
  return n;
}

std::vector<std::uint64_t> SpoolIndex::take_deletable(std::uint64_t active) {
  std::vector<std::uint64_t> out;
  for (auto it = segments_.begin(); it != segments_.end() && it->first < active && it->second.unresolved == 0;) {
    out.push_back(it->first);
    it = segments_.erase(it);
  }
  return out;
}

std::size_t SpoolIndex::bytes() const {
  std::size_t total = 0;
  for (const auto& [id, s] : segments_) total += s.bytes;
  return total;
}

std::size_t SpoolIndex::segment_bytes(std::uint64_t segment) const {
  const auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.bytes;
}

std::size_t SpoolIndex::unresolved_in_segment(std::uint64_t segment) const {
  const auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.unresolved;
}

std::optional<std::int64_t> SpoolIndex::oldest_record_ms() const {
  if (records_.empty()) return std::nullopt;
  return records_.front().time_ms;
}

std::vector<std::uint64_t> SpoolIndex::segments() const {
  std::vector<std::uint64_t> out;
  out.reserve(segments_.size());
  for (const auto& [id, s] : segments_) out.push_back(id);
  return out;
}

std::size_t SpoolIndex::memory_bytes() const {
  std::size_t n = deque_heap<RecordsSlot>(records_.size());
  n += progress_.size() * heap_chunk(sizeof(void*) + sizeof(std::pair<const EntryId, Progress>));
  n += progress_.bucket_count() > 1 ? heap_chunk(progress_.bucket_count() * sizeof(void*)) : 0;
  n += vector_heap(sources_) + vector_heap(free_sources_);
  n += source_ids_.size() * map_node(sizeof(std::pair<const SourceKey, std::uint32_t>));
  n += vector_heap(topics_) + vector_heap(free_topics_);
  n += topic_ids_.size() * map_node(sizeof(std::pair<const std::string, std::uint32_t>));
  n += batches_.size() * map_node(sizeof(std::pair<const EntryId, BatchState>));
  n += segments_.size() * map_node(sizeof(std::pair<const std::uint64_t, SegmentState>));
  n += client_records_.size() * map_node(sizeof(std::pair<const ClientKey, std::vector<KeptClient>>));
  n += client_record_keys_.size() * map_node(sizeof(std::pair<const EntryId, ClientKey>));
  n += tracked_bytes_ + view_bytes_ + producers_bytes_;
  return n + string_heap(looked_up_.topic);
}

}  // namespace pp::spool
