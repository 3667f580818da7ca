#include "tests/broker/cluster_stats.h"

#include <algorithm>

#include "tests/broker/cluster_state.h"

namespace pp::test_broker {

namespace {

// Topic names are [a-zA-Z0-9._-] (validated), so no JSON escaping is needed;
// escape anyway so a future relaxation can't produce broken JSON.
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

const PartitionStats* ClusterStats::find(std::string_view topic, std::int32_t partition) const {
  for (const auto& p : partitions) {
    if (p.topic == topic && p.partition == partition) return &p;
  }
  return nullptr;
}

std::int64_t ClusterStats::total_records() const {
  std::int64_t n = 0;
  for (const auto& p : partitions) n += p.records;
  return n;
}

std::int64_t ClusterStats::total_duplicates() const {
  std::int64_t n = 0;
  for (const auto& p : partitions) n += p.duplicates;
  return n;
}

std::int64_t ClusterStats::total_window_violations() const {
  std::int64_t n = 0;
  for (const auto& p : partitions) n += p.window_violations;
  return n;
}

int ClusterStats::max_inflight() const {
  int m = 0;
  for (const auto& p : partitions) m = std::max(m, p.max_inflight);
  return m;
}

ClusterStats collect_stats(const ClusterState& cluster) {
  ClusterStats out;
  for (const auto& t : cluster.topics()) {
    for (const auto& p : t->partitions) {
      PartitionStats s;
      s.topic = p->topic;
      s.partition = p->index;
      s.leader = p->leader;
      s.leader_epoch = p->leader_epoch;
      s.retain = cluster.effective_retain(*p);
      s.records = p->log.record_count();
      s.duplicates = p->duplicates;
      s.max_inflight = p->watchdog.max_inflight();
      s.window_violations = p->watchdog.violations();
      s.batches = static_cast<std::int64_t>(p->log.batches().size());
      s.log_end_offset = p->log.log_end_offset();
      out.partitions.push_back(std::move(s));
    }
  }
  return out;
}

std::string to_json(const ClusterStats& stats) {
  std::string out = "{\"partitions\":[";
  bool first = true;
  for (const auto& p : stats.partitions) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"topic\":";
    append_json_string(out, p.topic);
    out += ",\"partition\":" + std::to_string(p.partition);
    out += ",\"leader\":" + std::to_string(p.leader);
    out += ",\"leader_epoch\":" + std::to_string(p.leader_epoch);
    out += ",\"retain\":" + std::to_string(p.retain);
    out += ",\"records\":" + std::to_string(p.records);
    out += ",\"duplicates\":" + std::to_string(p.duplicates);
    out += ",\"max_inflight\":" + std::to_string(p.max_inflight);
    out += ",\"window_violations\":" + std::to_string(p.window_violations);
    out += "}";
  }
  out += "]}";
  return out;
}

}  // namespace pp::test_broker
