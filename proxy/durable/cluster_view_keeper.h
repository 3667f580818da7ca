// Keeps the spool's cluster view current (docs/design/SPOOL.md, "Entries",
// kind 5): the topics the proxy knows and their partition counts, appended
// through the spool's writer whenever they change, so that a start with the
// upstream unreachable can answer clients' Metadata from the last view
// (docs/design/INTERFACES.md, "HTTP endpoints" and `[spool]`). The writer
// repeats the last view at the head of every segment, so deleting old
// segments never loses it.
//
// Owns no state beyond the view last offered and whether it is on disk: a
// view whose append failed (a disk error, which the writer logs) is written
// again at the next offer, changed or not. Cluster-view appends are never
// refused for room; a closed writer drops them (shutting down).
//
// Loop thread only, like the writer, which must outlive this object.
// Callbacks of appends still in flight when this object is destroyed do
// nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "proxy/spool/spool_writer.h"

namespace pp::durable {

// Topic name -> partition count (> 0).
using ClusterView = std::map<std::string, std::int32_t>;

class ClusterViewKeeper {
 public:
  // Starts from the view the spool holds (recovered, or appended since).
  explicit ClusterViewKeeper(spool::SpoolWriter& writer);
  ClusterViewKeeper(const ClusterViewKeeper&) = delete;
  ClusterViewKeeper& operator=(const ClusterViewKeeper&) = delete;

  // The cluster view as the spool held it when this keeper was made: what a
  // cold start answers Metadata from.
  static ClusterView recovered(const spool::SpoolWriter& writer);

  // The view as it is now. Appended when it differs from the last one
  // appended, or when that append failed; a topic with a partition count
  // below 1 is left out.
  void offer(const ClusterView& view);

  // The view last offered (or recovered), and whether it is durable.
  const ClusterView& view() const { return view_; }
  bool durable() const { return durable_ && in_flight_ == 0; }
  // Cluster-view entries appended by this keeper, durable or not.
  std::uint64_t appends() const { return appends_; }

 private:
  spool::SpoolWriter& writer_;
  ClusterView view_;
  bool written_ = true;  // view_ is durable or queued; false after a failed append
  bool durable_ = true;
  std::uint64_t in_flight_ = 0;
  std::uint64_t appends_ = 0;
  std::uint64_t generation_ = 0;  // of view_, so a late failure of an older view is ignored
  std::shared_ptr<ClusterViewKeeper*> self_;
};

}  // namespace pp::durable
