// A family's labelled children, cached by a small key. prometheus-cpp's
// Family::Add hashes the label set and takes the family's mutex (which a
// scrape also holds); this does that once per key, so every later update is
// a lookup in a map only the loop thread touches, plus one atomic operation.
#pragma once

#include <prometheus/family.h>
#include <prometheus/labels.h>

#include <unordered_map>
#include <utility>

namespace pp {

template <class Metric, class Key, class Hash = std::hash<Key>>
class ChildCache {
 public:
  explicit ChildCache(prometheus::Family<Metric>& family) : family_(family) {}

  // `labels_of(key)` builds the label set on a miss; `args` are the child's
  // constructor arguments (a histogram's buckets).
  template <class LabelsOf, class... Args>
  Metric& get(const Key& key, LabelsOf&& labels_of, Args&&... args) {
    if (auto it = children_.find(key); it != children_.end()) return *it->second;
    Metric& child = family_.Add(labels_of(key), std::forward<Args>(args)...);
    children_.emplace(key, &child);
    return child;
  }

  // Every child made so far, for sweeps over all brokers or errors.
  const std::unordered_map<Key, Metric*, Hash>& children() const { return children_; }

 private:
  prometheus::Family<Metric>& family_;
  std::unordered_map<Key, Metric*, Hash> children_;
};

}  // namespace pp
