#include "proxy/durable/cluster_view_keeper.h"

#include <spdlog/spdlog.h>
#include <uv.h>

#include <utility>

namespace pp::durable {

namespace {

ClusterView from_entry(const spool::ClusterViewEntry& entry) {
  ClusterView view;
  for (const spool::TopicPartitions& t : entry.topics) {
    if (t.partitions > 0) view[t.topic] = t.partitions;
  }
  return view;
}

spool::ClusterViewEntry to_entry(const ClusterView& view) {
  spool::ClusterViewEntry entry;
  entry.topics.reserve(view.size());
  for (const auto& [topic, partitions] : view) entry.topics.push_back({topic, partitions});
  return entry;
}

}  // namespace

ClusterViewKeeper::ClusterViewKeeper(spool::SpoolWriter& writer)
    : writer_(writer), view_(recovered(writer)), self_(std::make_shared<ClusterViewKeeper*>(this)) {}

ClusterView ClusterViewKeeper::recovered(const spool::SpoolWriter& writer) {
  const auto& entry = writer.index().cluster_view();
  return entry ? from_entry(*entry) : ClusterView{};
}

void ClusterViewKeeper::offer(const ClusterView& offered) {
  ClusterView view;
  for (const auto& [topic, partitions] : offered) {
    if (partitions > 0) view.emplace(topic, partitions);
  }
  if (view == view_ && written_) return;
  view_ = std::move(view);
  const std::uint64_t generation = ++generation_;
  std::weak_ptr<ClusterViewKeeper*> self = self_;
  auto appended = writer_.append(to_entry(view_), [self, generation](int status, spool::EntryId) {
    auto alive = self.lock();
    if (!alive) return;
    ClusterViewKeeper& keeper = **alive;
    --keeper.in_flight_;
    if (generation != keeper.generation_) return;
    keeper.durable_ = status == 0;
    if (status == 0) return;
    // The writer has logged the disk error; the next offer writes it again.
    keeper.written_ = false;
    spdlog::debug("spool: cluster view of {} topics not written ({}); written again with the next metadata",
                  keeper.view_.size(), uv_strerror(status));
  });
  if (!appended) {
    written_ = false;
    durable_ = false;
    return;
  }
  ++in_flight_;
  ++appends_;
  written_ = true;
  durable_ = false;
}

}  // namespace pp::durable
