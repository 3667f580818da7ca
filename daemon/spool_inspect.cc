#include "daemon/spool_inspect.h"

#include <map>
#include <ostream>
#include <string_view>
#include <tuple>

#include "proxy/spool/spool_format.h"
#include "proxy/spool/spool_recovery.h"

namespace pp {
namespace {

struct PartitionSummary {
  std::size_t batches = 0;
  std::int64_t batch_records = 0;
  std::size_t records_entries = 0;
  std::int64_t unsequenced_records = 0;
};

void print_segments(const spool::RecoveredSpool& s, std::ostream& out) {
  out << "segments: " << s.report.segments.size() << ", " << s.index.bytes() << " bytes\n";
  for (const spool::SegmentFile& f : s.report.segments) {
    out << "  " << f.path << "  bytes=" << f.bytes << " entries=" << f.entries;
    if (f.entries > 0) out << " ids=" << f.first_id << "-" << f.last_id;
    out << " unresolved=" << s.index.unresolved_in_segment(f.id);
    if (f.corrupt) out << "  [corrupt: moved aside]";
    out << "\n";
  }
  out << "corrupt ranges: " << (s.report.damage.empty() ? "none" : "") << "\n";
  for (const spool::CorruptRange& r : s.report.damage) {
    out << "  " << r.path << "  offset=" << r.offset << " bytes=" << r.bytes << "  " << r.reason << "\n";
  }
  if (s.report.torn_bytes > 0) out << "  a start would cut a torn tail of " << s.report.torn_bytes << " bytes\n";
  if (s.report.corrupt_bytes > 0) {
    out << "  a start would move a segment aside, losing " << s.report.corrupt_bytes << " bytes after its damage\n";
  }
}

void print_owed(const spool::RecoveredSpool& s, std::int64_t now_ms, std::ostream& out) {
  const spool::SpoolIndex& index = s.index;
  if (index.identity()) {
    out << "producer identity: id=" << index.identity()->producer_id << " epoch=" << index.identity()->producer_epoch
        << "\n";
  } else {
    out << "producer identity: none\n";
  }
  out << "cluster view: "
      << (index.cluster_view() ? std::to_string(index.cluster_view()->topics.size()) + " topics" : "none") << "\n";
  out << "records owed: " << index.unresolved_record_count() << " records in " << index.unresolved_records().size()
      << " entries\n";
  if (const auto oldest = index.oldest_record_ms()) {
    out << "oldest record age: " << (now_ms - *oldest) / 1000.0 << " s\n";
  } else {
    out << "oldest record age: none\n";
  }
  std::map<std::tuple<std::string, std::int32_t>, PartitionSummary> partitions;
  const auto batches = index.unresolved_batches();
  for (const spool::PendingBatch& b : batches) {
    auto& p = partitions[{b.batch.topic, b.batch.partition}];
    ++p.batches;
    p.batch_records += b.batch.record_count;
  }
  for (const spool::PendingRecords& r : index.unsequenced_records()) {
    auto& p = partitions[{r.topic, r.partition}];
    ++p.records_entries;
    p.unsequenced_records += r.record_count - r.first_unsequenced;
  }
  out << "batches per partition:" << (partitions.empty() ? " none" : "") << "\n";
  for (const auto& [key, p] : partitions) {
    out << "  " << std::get<0>(key) << "/" << std::get<1>(key) << "  unresolved batches=" << p.batches
        << " (records=" << p.batch_records << ") unsequenced records=" << p.unsequenced_records << " in "
        << p.records_entries << " entries\n";
  }
  out << "unresolved batches:" << (batches.empty() ? " none" : "") << "\n";
  for (const spool::PendingBatch& b : batches) {
    out << "  entry " << b.id << "  " << b.batch.topic << "/" << b.batch.partition
        << "  producer_id=" << b.batch.producer_id << " epoch=" << b.batch.producer_epoch
        << " base_sequence=" << b.batch.base_sequence << " records=" << b.batch.record_count << " from";
    for (const spool::RecordRange& r : b.batch.ranges) {
      out << " " << r.records << "[" << r.first_record << "+" << r.record_count << "]";
    }
    out << "\n";
  }
}

std::string_view state_name(spool::ClientBatchState state) {
  switch (state) {
    case spool::ClientBatchState::kAcked:
      return "acked";
    case spool::ClientBatchState::kFailed:
      return "failed";
    case spool::ClientBatchState::kOutcomeUnknown:
      return "outcome_unknown";
    case spool::ClientBatchState::kPending:
      return "pending";
  }
  return "unknown";
}

// The idempotent clients' dedup state a start would restore: the last
// snapshot and the client records after it.
void print_client_producers(const spool::SpoolIndex& index, std::ostream& out) {
  const auto records = index.client_records();
  if (!index.client_producers()) {
    out << "client producers: no snapshot; " << records.size() << " client records entries\n";
  } else {
    const spool::ClientProducersEntry& s = *index.client_producers();
    out << "client producers: snapshot entry " << index.client_producers_id() << ", " << s.producers.size()
        << " producers, next_producer_id=" << s.next_producer_id << "; " << records.size()
        << " client records entries after it\n";
    for (const spool::ClientProducerSnapshot& p : s.producers) {
      out << "  producer " << p.producer_id << " epoch=" << p.epoch << (p.bumped_by_request ? " (bumped)" : "") << "\n";
      for (const spool::ClientPartitionSnapshot& t : p.partitions) {
        out << "    " << t.topic << "/" << t.partition << "  epoch=" << t.epoch << " last_sequence=" << t.last_sequence
            << " batches:";
        for (const spool::ClientBatchSnapshot& b : t.batches) {
          out << " " << b.epoch << ":" << b.first_sequence << "-" << b.last_sequence << "=" << state_name(b.state);
          if (b.error_code != 0) out << "(" << b.error_code << ")";
        }
        out << "\n";
      }
    }
  }
  for (const spool::ClientRecord& r : records) {
    out << "  records entry " << r.id << "  " << r.topic << "/" << r.partition << "  producer_id=" << r.producer_id
        << " epoch=" << r.epoch << " base_sequence=" << r.base_sequence << " records=" << r.record_count << "\n";
  }
}

}  // namespace

int spool_inspect(const std::string& dir, std::int64_t now_ms, std::ostream& out, std::ostream& err) {
  const auto recovered = spool::SpoolRecovery(dir, spool::SpoolRecovery::Mode::kReadOnly).run();
  if (!recovered) {
    err << "produce-proxy spool inspect: " << recovered.error() << "\n";
    return 1;
  }
  out << "spool " << dir << " (format version " << spool::kFormatVersion << ")\n";
  print_segments(*recovered, out);
  print_owed(*recovered, now_ms, out);
  print_client_producers(recovered->index, out);
  return 0;
}

}  // namespace pp
