// What the pipeline reports as it works: the metrics layer implements this;
// the default does nothing. Called on the loop thread, per batch or
// per event, never per record.
#pragma once

#include <cstdint>
#include <string_view>

#include "proxy/pipeline/topic_partition.h"
#include "proxy/protocol/error_code.h"

namespace pp {

class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;

  virtual void on_window(const TopicPartition&, std::int32_t /*window*/) {}
  virtual void on_window_reset(const TopicPartition&) {}
  virtual void on_inflight_batches(const TopicPartition&, std::int32_t /*count*/) {}
  virtual void on_batch_sent(const TopicPartition&, std::int32_t /*records*/, std::size_t /*bytes*/, bool /*retry*/) {}
  virtual void on_retry(ErrorCode /*error*/) {}
  virtual void on_duplicate_sequence() {}
  virtual void on_epoch_bump(std::string_view /*reason*/) {}
  // Batches that may already be in the log were renumbered (`reason`:
  // epoch_bump, record_errors): their records may be written twice.
  virtual void on_ambiguous_renumbered(std::string_view /*reason*/, std::int64_t /*batches*/) {}
  // The producer identity entered `state` (UNINITIALIZED, INITIALIZING, READY, FATAL).
  virtual void on_identity_state(std::string_view /*state*/) {}
  virtual void on_leader_change(const TopicPartition&) {}
  virtual void on_records_delivered(std::int64_t /*records*/) {}
  virtual void on_records_failed(ErrorCode /*error*/, std::int64_t /*records*/) {}
  virtual void on_produce_request(std::int32_t /*node*/) {}
  virtual void on_produce_response(std::int32_t /*node*/, std::int64_t /*round_trip_ms*/) {}
};

}  // namespace pp
