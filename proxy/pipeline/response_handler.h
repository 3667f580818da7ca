// Produce responses, partition by partition (docs/design/PIPELINE.md:
// "Learning the window", "Response handling", "Leader change", "Splitting on
// MESSAGE_TOO_LARGE", "Isolating refused records"). For each batch a request
// carried: the window its leader announces is learned, the pure response
// table (classify_response) decides, and this class carries the action out:
// complete, retry after a backoff, follow a leader hint, split, isolate the
// refused runs, bisect, fail, request an epoch bump, or go fatal. Batches
// rebuilt with new boundaries take the old one's place and sequences.
//
// Owns no state of its own: partitions, topics, identity and the budget are
// the producer's, lent to it. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proxy/pipeline/accumulator.h"
#include "proxy/pipeline/batch_completion.h"
#include "proxy/pipeline/batch_journaling.h"
#include "proxy/pipeline/clock.h"
#include "proxy/pipeline/epoch_bumper.h"
#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/partition_map.h"
#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/pipeline/producer_identity.h"
#include "proxy/pipeline/response_classifier.h"
#include "proxy/pipeline/topic_table.h"
#include "proxy/pipeline/upstream_port.h"

namespace pp {

// One Produce request in flight: at most one batch per partition.
struct InFlightRequest {
  std::int32_t node = -1;
  std::int16_t version = 0;  // as sent: the upstream reports it
  std::int64_t sent_ms = 0;
  std::vector<BatchPtr> batches;
  // Each topic's id when the request was sent (zero: unknown then), whether
  // it named topics by id (v13+) or by name. A topic known by another id
  // since was deleted and created again: the answer speaks of the old log.
  std::map<std::string, Uuid, std::less<>> topic_ids;
};

class ResponseHandler {
 public:
  ResponseHandler(const PipelineConfig& config, UpstreamPort& upstream, const Clock& clock, PipelineObserver& observer,
                  MemoryBudget& memory, Accumulator& accumulator, TopicTable& topics, ProducerIdentity& identity,
                  PartitionMap& partitions, EpochBumper& bumper, BatchCompletion& completion,
                  BatchJournaling& journaling)
      : config_(config),
        upstream_(upstream),
        clock_(clock),
        observer_(observer),
        memory_(memory),
        accumulator_(accumulator),
        topics_(topics),
        identity_(identity),
        partitions_(partitions),
        bumper_(bumper),
        completion_(completion),
        journaling_(journaling) {}

  // The answer to `request` (or the error it ended with: a disconnect or a
  // timeout, "maybe appended"), applied to each batch it carried.
  void on_produce_result(const InFlightRequest& request, ProduceResult result);
  // `p`'s leader is now `leader` at `epoch` (metadata or a KIP-951 hint): its
  // window starts again at 5, and nothing goes to the new leader until the old
  // one has answered for every batch it holds.
  void leader_changed(PartitionState& p, std::int32_t leader, std::int32_t epoch);

 private:
  // The partition's answer and the topic answer holding it; both null when absent.
  struct Answer {
    const ProduceTopicResponse* topic = nullptr;
    const ProducePartitionResponse* partition = nullptr;
  };
  Answer find_answer(const InFlightRequest& request, const ProduceResponse& response, const TopicPartition& tp) const;
  bool sent_under_old_id(const InFlightRequest& request, const TopicPartition& tp) const;
  void handle_batch(const InFlightRequest& request, const BatchPtr& batch, ErrorCode error, const Answer& answer);
  BatchFacts facts_of(const PartitionState& p, const ProducerBatch& batch,
                      const ProducePartitionResponse* response) const;
  void apply(PartitionState& p, const BatchPtr& batch, ErrorCode error, const ResponseAction& action,
             const ProducePartitionResponse* response);
  void learn_window(PartitionState& p, const BatchPtr& batch, ErrorCode error, const Answer& answer,
                    std::int16_t version);
  void retry_later(PartitionState& p, const BatchPtr& batch, ErrorCode error, std::int64_t now);
  BatchPtr rebuild(const ProducerBatch& from, const std::vector<BatchPiece>& pieces, std::int32_t base_sequence);
  void split(PartitionState& p, const BatchPtr& batch);
  void isolate(PartitionState& p, const BatchPtr& batch, ErrorCode error, const ProducePartitionResponse& response);
  void bisect(PartitionState& p, const BatchPtr& batch, ErrorCode error);
  void fatal(ErrorCode error);

  const PipelineConfig& config_;
  UpstreamPort& upstream_;
  const Clock& clock_;
  PipelineObserver& observer_;
  MemoryBudget& memory_;
  Accumulator& accumulator_;
  TopicTable& topics_;
  ProducerIdentity& identity_;
  PartitionMap& partitions_;
  EpochBumper& bumper_;
  BatchCompletion& completion_;
  BatchJournaling& journaling_;
};

}  // namespace pp
