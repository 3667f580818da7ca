#include "proxy/pipeline/topic_table.h"

namespace pp {

namespace {

bool leader_changed(const PartitionLeadership& old, const PartitionLeadership& now) {
  return old.leader_id != now.leader_id || now.leader_epoch > old.leader_epoch;
}

// An epoch lower than the known one: a broker with an older view answered.
bool stale(const PartitionLeadership& old, const PartitionLeadership& now) {
  return old.leader_epoch >= 0 && now.leader_epoch >= 0 && now.leader_epoch < old.leader_epoch;
}

}  // namespace

void TopicTable::forget(std::string_view name) {
  if (auto it = topics_.find(name); it != topics_.end()) {
    names_by_id_.erase(it->second.topic_id);
    topics_.erase(it);
  }
  if (auto it = answers_.find(name); it != answers_.end()) answers_.erase(it);
}

std::uint64_t TopicTable::answers(std::string_view name) const {
  auto it = answers_.find(name);
  return it == answers_.end() ? 0 : it->second;
}

TopicChanges TopicTable::apply(const std::string& name, const TopicLeadership& reported) {
  TopicChanges changes;
  auto found = topics_.find(name);
  const TopicLeadership* old = found == topics_.end() ? nullptr : &found->second;

  TopicLeadership now = reported;
  if (now.topic_id.is_zero() && old) now.topic_id = old->topic_id;
  changes.recreated =
      old && !old->topic_id.is_zero() && !reported.topic_id.is_zero() && old->topic_id != reported.topic_id;
  const bool compare = old && !changes.recreated;
  for (std::size_t i = 0; i < now.partitions.size(); ++i) {
    if (!compare || i >= old->partitions.size()) continue;
    const PartitionLeadership& known = old->partitions[i];
    if (stale(known, now.partitions[i])) {
      now.partitions[i] = known;
      ++changes.stale_partitions;
    } else if (leader_changed(known, now.partitions[i])) {
      changes.leader_changes.push_back({static_cast<std::int32_t>(i), known.leader_id, now.partitions[i].leader_id,
                                        known.leader_epoch, now.partitions[i].leader_epoch});
    }
  }
  if (old && old->topic_id != now.topic_id) names_by_id_.erase(old->topic_id);
  if (!now.topic_id.is_zero()) names_by_id_.insert_or_assign(now.topic_id, name);
  topics_.insert_or_assign(name, std::move(now));
  ++answers_[name];
  return changes;
}

bool TopicTable::take_leader_hint(const TopicPartition& tp, std::int32_t leader_id, std::int32_t leader_epoch) {
  if (leader_id < 0 || leader_epoch < 0 || tp.partition < 0) return false;
  auto found = topics_.find(tp.topic);
  if (found == topics_.end()) return false;
  auto& partitions = found->second.partitions;
  if (static_cast<std::size_t>(tp.partition) >= partitions.size()) return false;
  PartitionLeadership& p = partitions[static_cast<std::size_t>(tp.partition)];
  if (p.leader_epoch >= 0 && leader_epoch <= p.leader_epoch) return false;
  p = PartitionLeadership{ErrorCode::kNone, leader_id, leader_epoch};
  return true;
}

const TopicLeadership* TopicTable::find(std::string_view name) const {
  auto found = topics_.find(name);
  return found == topics_.end() ? nullptr : &found->second;
}

const PartitionLeadership* TopicTable::partition(const TopicPartition& tp) const {
  const TopicLeadership* t = find(tp.topic);
  if (!t || t->error != ErrorCode::kNone || tp.partition < 0 ||
      static_cast<std::size_t>(tp.partition) >= t->partitions.size()) {
    return nullptr;
  }
  return &t->partitions[static_cast<std::size_t>(tp.partition)];
}

Uuid TopicTable::topic_id(std::string_view name) const {
  const TopicLeadership* t = find(name);
  return t ? t->topic_id : Uuid{};
}

std::optional<std::string> TopicTable::name_of(const Uuid& id) const {
  if (id.is_zero()) return std::nullopt;
  auto found = names_by_id_.find(id);
  if (found == names_by_id_.end()) return std::nullopt;
  return found->second;
}

std::set<std::int32_t> TopicTable::leader_nodes() const {
  std::set<std::int32_t> nodes;
  for (const auto& [name, t] : topics_) {
    for (const PartitionLeadership& p : t.partitions) {
      if (p.leader_id >= 0) nodes.insert(p.leader_id);
    }
  }
  return nodes;
}

}  // namespace pp
