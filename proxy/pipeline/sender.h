// What may go now (docs/design/PIPELINE.md, "Draining rules"): per leader,
// round-robin over its partitions with the retry-head rule, adaptive batching
// (at once when nothing is in flight, linger only as a bound), the window and
// span checks and the first-ack rule; batches are built and sequenced at first
// send; a request per round per node while the connection takes one; a batch
// carrying durable runs goes only once its journal entry is durable
// (BatchJournaling), and holds its partition's later batches meanwhile. The
// producer hands each assembled request to the upstream; the ResponseHandler
// handles what comes back.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/batch_journaling.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_identity.h"
#include "proxy/pipeline/topic_table.h"
#include "proxy/pipeline/upstream_port.h"

namespace pp {

// One Produce ready to go: at most one batch per partition, every batch
// already marked in flight to `node`.
struct OutgoingProduce {
  std::int32_t node = -1;
  std::int16_t version = 0;  // asked for; the upstream reports what it sent
  ProduceRequest request;
  std::vector<BatchPtr> batches;
};

class Sender {
 public:
  Sender(const PipelineConfig& config, UpstreamPort& upstream, Accumulator& accumulator,
         const ProducerIdentity& identity, const TopicTable& topics, PipelineObserver& observer,
         BatchJournaling& journaling)
      : config_(config),
        upstream_(upstream),
        accumulator_(accumulator),
        identity_(identity),
        topics_(topics),
        observer_(observer),
        journaling_(journaling) {}

  // While held, no partition starts a new batch (no new sequence anywhere);
  // batches already sequenced still go (replay after a restart).
  void set_new_batches_held(bool held) { new_batches_held_ = held; }

  // Calls `send` for every request that may go now. Partitions without a
  // leader get their topics' metadata asked for.
  void drain(PartitionMap& partitions, std::int64_t now, const std::function<void(OutgoingProduce)>& send);
  // When `p` may next send, if only time stands in its way; -1 if an event
  // must come first (a held partition or a busy connection: no busy loop).
  std::int64_t next_send_ms(const PartitionState& p, std::int64_t now) const;

 private:
  void drain_node(std::int32_t node, std::span<const std::pair<std::int32_t, PartitionState*>> list,
                  PartitionMap& partitions, std::int64_t now, const std::function<void(OutgoingProduce)>& send);
  BatchPtr next_batch_for(PartitionState& p, std::int64_t now);
  bool batch_ready(const PartitionState& p, std::int64_t now) const;
  OutgoingProduce assemble(std::int32_t node, std::vector<BatchPtr> batches, PartitionMap& partitions);
  void mark_sent(PartitionState& p, ProducerBatch& b, std::int32_t node);

  const PipelineConfig& config_;
  UpstreamPort& upstream_;
  Accumulator& accumulator_;
  const ProducerIdentity& identity_;
  const TopicTable& topics_;
  PipelineObserver& observer_;
  BatchJournaling& journaling_;
  bool new_batches_held_ = false;
  std::map<std::int32_t, std::size_t> round_robin_;              // node -> next start index
  std::vector<std::pair<std::int32_t, PartitionState*>> ready_;  // drain()'s, kept for its capacity
  std::vector<std::string> leaderless_;
};

}  // namespace pp
