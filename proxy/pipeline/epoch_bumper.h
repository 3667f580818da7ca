// Epoch bumps and renumbering (docs/design/PIPELINE.md, "Epoch bump"): the
// local, client-side bump of KIP-360. A partition whose sequences can no
// longer be trusted (the broker lost its state, a batch failed or expired and
// left a gap) is put in the rewrite set; once none of the rewrite set is in
// flight (drain, then bump) the producer epoch goes up by one and every
// unacked batch of those partitions is renumbered from sequence 0 under it,
// its bytes re-stamped in place. An exhausted epoch asks for a new producer
// id instead, and the rewrite set moves to it when it comes.
//
// Owns the bump request, its reason and the rewrite set; reads and advances
// the ProducerIdentity; renumbers partitions of the producer's map. Loop
// thread only.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_identity.h"
#include "proxy/pipeline/topic_partition.h"

namespace pp {

class EpochBumper {
 public:
  // `partitions` must hold every partition of the rewrite set while it is
  // in it (idle retirement skips them: renumbers()).
  EpochBumper(ProducerIdentity& identity, PartitionMap& partitions, PipelineObserver& observer)
      : identity_(identity), partitions_(partitions), observer_(observer) {}

  // `p` needs renumbering under a new epoch; the first reason given names the bump.
  void request(PartitionState& p, std::string_view reason);
  // A new epoch with nothing to renumber (it makes every sequence memo moot);
  // no-op while a bump is already requested.
  void request_epoch_change(std::string_view reason);
  // Until the next bump is done, bump to a new producer id, never to the
  // next epoch: the identity was restored from the spool, and the epochs
  // after it may have been used before the restart.
  void require_new_id() { new_id_required_ = true; }
  bool new_id_required() const { return new_id_required_; }
  bool requested() const { return requested_; }
  // `tp` is in the rewrite set: its state must stay until the bump.
  bool renumbers(const TopicPartition& tp) const { return rewrite_set_.contains(tp); }

  // In poll(): bumps once nothing of the rewrite set is in flight (an answer
  // under the old epoch must not arrive after the renumbering) or waiting
  // for its journal entry (an entry must name the batch's current form). At
  // an exhausted epoch, or while a new id is required, the identity goes
  // back to UNINITIALIZED for a new id.
  void maybe_bump();
  // InitProducerId answered with `fresh`: a pending bump (exhausted epoch)
  // renumbers under it, otherwise the identity simply takes it.
  void on_new_producer_id(const ProducerIdAndEpoch& fresh);

  // `batches` of `p` that may already be in the log got new sequences or new
  // boundaries: the broker matches duplicates by exact sequence range, so
  // their records may be in the log twice. Never silent: logged and counted
  // by `reason` (the client-visible side of "Epoch bump", PIPELINE.md).
  void count_ambiguous_renumbered(const PartitionState& p, std::int64_t batches, std::string_view reason);

 private:
  void apply(const ProducerIdAndEpoch& next);

  ProducerIdentity& identity_;
  PartitionMap& partitions_;
  PipelineObserver& observer_;
  bool requested_ = false;
  bool new_id_required_ = false;
  std::string reason_;
  std::set<TopicPartition> rewrite_set_;
};

}  // namespace pp
