#include "proxy/pipeline/producer_identity.h"

#include <spdlog/spdlog.h>

#include <string>

namespace pp {

std::string_view to_string(IdentityState s) {
  switch (s) {
    case IdentityState::kUninitialized:
      return "UNINITIALIZED";
    case IdentityState::kInitializing:
      return "INITIALIZING";
    case IdentityState::kReady:
      return "READY";
    case IdentityState::kFatal:
      return "FATAL";
  }
  return "?";
}

void ProducerIdentity::set_state(IdentityState next, std::string_view reason) {
  if (next == state_) return;
  // Back to UNINITIALIZED means a failed InitProducerId or an exhausted
  // epoch: worth an operator's attention, as FATAL is.
  const auto level = next == IdentityState::kFatal           ? spdlog::level::err
                     : next == IdentityState::kUninitialized ? spdlog::level::warn
                     : next == IdentityState::kReady         ? spdlog::level::info
                                                             : spdlog::level::debug;
  spdlog::log(level, "producer identity: {} -> {} ({})", to_string(state_), to_string(next), reason);
  state_ = next;
  observer_.on_identity_state(to_string(next));
}

void ProducerIdentity::initializing() {
  set_state(IdentityState::kInitializing, "InitProducerId attempt " + std::to_string(failed_attempts_ + 1));
}

void ProducerIdentity::initialization_failed(ErrorCode error, std::int64_t now, std::int64_t backoff_ms) {
  ++failed_attempts_;
  retry_at_ms_ = now + backoff_ms;
  set_state(IdentityState::kUninitialized, "InitProducerId failed with " + std::string(error_name(error)) +
                                               "; retrying in " + std::to_string(backoff_ms) + " ms");
}

void ProducerIdentity::ready_with(const ProducerIdAndEpoch& fresh) {
  failed_attempts_ = 0;
  set_state(IdentityState::kReady,
            "producer id " + std::to_string(fresh.id.value) + ", epoch " + std::to_string(fresh.epoch.value));
}

void ProducerIdentity::fail(ErrorCode error) {
  fatal_error_ = error;
  set_state(IdentityState::kFatal, std::string(error_name(error)) + ": failing every buffered record");
}

}  // namespace pp
