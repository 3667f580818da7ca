#include "metrics/partition_series.h"

#include "proxy/pipeline/pipeline_config.h"

namespace pp {

PartitionSeries::PartitionSeries(prometheus::Family<prometheus::Gauge>& inflight_batches,
                                 prometheus::Family<prometheus::Gauge>& partition_window,
                                 prometheus::Family<prometheus::Counter>& window_resets_total, bool partition_labels)
    : inflight_family_(inflight_batches),
      window_family_(partition_window),
      resets_family_(window_resets_total),
      partition_labels_(partition_labels) {}

PartitionSeries::Children PartitionSeries::make_children(const prometheus::Labels& labels) {
  return Children{&inflight_family_.Add(labels), &window_family_.Add(labels), &resets_family_.Add(labels)};
}

PartitionSeries::Partition& PartitionSeries::partition(const TopicPartition& tp) {
  if (auto it = partitions_.find(tp); it != partitions_.end()) return it->second;

  Partition p;
  p.window = kInitialWindow;
  if (partition_labels_) {
    p.children = make_children({{"topic", tp.topic}, {"partition", std::to_string(tp.partition)}});
    p.children.window->Set(kInitialWindow);
  } else {
    auto [it, fresh] = topics_.try_emplace(tp.topic);
    Topic& topic = it->second;
    if (fresh) topic.children = make_children({{"topic", tp.topic}});
    ++topic.partitions_at_window[kInitialWindow];
    topic.children.window->Set(topic.partitions_at_window.begin()->first);
    p.topic = &topic;
  }
  return partitions_.emplace(tp, p).first->second;
}

void PartitionSeries::move_window(Topic& topic, std::int32_t from, std::int32_t to) {
  auto old = topic.partitions_at_window.find(from);
  if (old != topic.partitions_at_window.end() && --old->second == 0) topic.partitions_at_window.erase(old);
  ++topic.partitions_at_window[to];
}

void PartitionSeries::set_inflight(const TopicPartition& tp, std::int32_t batches) {
  Partition& p = partition(tp);
  if (p.topic) {
    p.topic->inflight_sum += batches - p.inflight;
    p.topic->children.inflight->Set(static_cast<double>(p.topic->inflight_sum));
  } else {
    p.children.inflight->Set(batches);
  }
  p.inflight = batches;
}

void PartitionSeries::set_window(const TopicPartition& tp, std::int32_t window) {
  Partition& p = partition(tp);
  if (p.topic) {
    move_window(*p.topic, p.window, window);
    p.topic->children.window->Set(p.topic->partitions_at_window.begin()->first);
  } else {
    p.children.window->Set(window);
  }
  p.window = window;
}

void PartitionSeries::window_reset(const TopicPartition& tp) {
  Partition& p = partition(tp);
  (p.topic ? p.topic->children : p.children).resets->Increment();
}

}  // namespace pp
