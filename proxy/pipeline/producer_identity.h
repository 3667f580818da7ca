// The producer id and epoch the pipeline writes under, as a small state machine
// (docs/design/PIPELINE.md, "Producer identity"): UNINITIALIZED -> INITIALIZING
// -> READY, back to UNINITIALIZED to retry InitProducerId or when the epoch is
// exhausted ("Epoch bump"), FATAL for good. Every change goes through
// set_state(), which logs it with its reason and reports it to the observer.
#pragma once

#include <cstdint>
#include <string_view>

#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/protocol/error_code.h"

namespace pp {

enum class IdentityState : std::uint8_t { kUninitialized, kInitializing, kReady, kFatal };
std::string_view to_string(IdentityState s);

class ProducerIdentity {
 public:
  explicit ProducerIdentity(PipelineObserver& observer) : observer_(observer) {}

  IdentityState state() const { return state_; }
  bool ready() const { return state_ == IdentityState::kReady; }
  const ProducerIdAndEpoch& current() const { return current_; }
  ErrorCode fatal_error() const { return fatal_error_; }
  // When an UNINITIALIZED identity may ask for an id again.
  std::int64_t retry_at_ms() const { return retry_at_ms_; }
  bool may_initialize(std::int64_t now) const { return state_ == IdentityState::kUninitialized && now >= retry_at_ms_; }

  void set_state(IdentityState next, std::string_view reason);

  // InitProducerId sent / answered. A failure waits `backoff_ms` before the next try.
  void initializing();
  void initialization_failed(ErrorCode error, std::int64_t now, std::int64_t backoff_ms);
  void ready_with(const ProducerIdAndEpoch& fresh);
  std::int32_t failed_attempts() const { return failed_attempts_; }

  // A local epoch bump or a new id after an exhausted epoch.
  void advance_to(const ProducerIdAndEpoch& next) { current_ = next; }
  bool epoch_exhausted() const { return current_.epoch.value == INT16_MAX; }

  void fail(ErrorCode error);

 private:
  PipelineObserver& observer_;
  IdentityState state_ = IdentityState::kUninitialized;
  ProducerIdAndEpoch current_;
  ErrorCode fatal_error_ = ErrorCode::kNone;
  std::int64_t retry_at_ms_ = 0;
  std::int32_t failed_attempts_ = 0;
};

}  // namespace pp
