// The error table of docs/design/PIPELINE.md, "Response handling" (librdkafka's
// rd_kafka_handle_Produce_error and Java's Sender.completeBatch /
// TransactionManager.canRetry, where they agree; our [I] rules where not).
#include "proxy/pipeline/response_classifier.h"

namespace pp {

std::string_view to_string(BatchOutcome outcome) {
  switch (outcome) {
    case BatchOutcome::kComplete:
      return "complete";
    case BatchOutcome::kCompleteDuplicate:
      return "complete_duplicate";
    case BatchOutcome::kRetry:
      return "retry";
    case BatchOutcome::kSplit:
      return "split";
    case BatchOutcome::kFail:
      return "fail";
    case BatchOutcome::kFatal:
      return "fatal";
    case BatchOutcome::kIsolate:
      return "isolate";
    case BatchOutcome::kBisect:
      return "bisect";
  }
  return "?";
}

namespace {

ResponseAction retry() {
  return {};
}

ResponseAction retry_and_bump(std::string_view reason) {
  ResponseAction a;
  a.bump_reason = reason;
  return a;
}

ResponseAction fail_and_bump(std::string_view reason, std::string_view message = {}) {
  ResponseAction a;
  a.outcome = BatchOutcome::kFail;
  a.bump_reason = reason;
  a.fail_message = message;
  return a;
}

ResponseAction out_of_order(const BatchFacts& f) {
  if (f.partition_unresolved) {
    // Unresolved sequences: only the first unresolved sequence tells that the
    // expired batch is not in the log; the ones after it merely wait for it.
    return f.first_unresolved ? retry_and_bump("out_of_order_after_unresolved") : retry();
  }
  // Head of line: the broker lost our state. A renumbered batch, or one
  // behind a failed predecessor, only waits (TransactionManager.canRetry).
  // A sequence continued into a log that never acknowledged it was refused
  // because the broker holds no state for us there (KAFKA-15591: a
  // never-written partition takes only sequence 0); counted apart.
  if (!f.renumbered && f.head_of_line) {
    return retry_and_bump(f.unconfirmed_log ? "first_sequence" : "out_of_order_sequence");
  }
  return retry();
}

ResponseAction not_leader(const BatchFacts& f) {
  ResponseAction a;
  if (f.newer_leader_hint) {
    a.follow_leader_hint = true;
  } else {
    a.refresh_metadata = true;
  }
  return a;
}

ResponseAction message_too_large(const BatchFacts& f) {
  if (f.record_count > 1 && !f.ever_ambiguous) {
    ResponseAction a;
    a.outcome = BatchOutcome::kSplit;
    return a;
  }
  return fail_and_bump("message_too_large", f.ever_ambiguous ? "too large, and an earlier attempt may be in the log"
                                                             : "a single record larger than the broker accepts");
}

// Bisection: a refusal about the content of some record, without saying which
// (no usable record_errors: brokers before 2.4, a policy plugin, the pre-2.4
// CORRUPT_MESSAGE for a null key on a compacted topic). Nothing was appended
// and no sequence used, so a batch of several runs is resent as two halves
// at the same sequences, and no bump is needed until a run fails alone.
bool may_bisect(const BatchFacts& f) {
  return f.client_runs > 1 && !f.bisections_spent;
}

ResponseAction refused_content(ErrorCode error, const BatchFacts& f) {
  if (may_bisect(f)) return {.outcome = BatchOutcome::kBisect};
  return fail_and_bump(error_name(error));
}

// Isolation: the errors LogValidator raises per record
// (RecordValidationException) reject the whole batch before its sequences are
// checked, and name the records. Only the runs holding those fail; the rest is
// resent, which leaves a gap in the batch's sequences, so the partition is
// renumbered (epoch bump).
ResponseAction record_validation(ErrorCode error, const BatchFacts& f) {
  if (!f.record_errors_listed) return refused_content(error, f);
  ResponseAction a;
  a.outcome = BatchOutcome::kIsolate;
  a.bump_reason = "record_errors";
  return a;
}

}  // namespace

ResponseAction classify_response(ErrorCode error, const BatchFacts& f) {
  switch (error) {
    case ErrorCode::kNone:
      return {.outcome = BatchOutcome::kComplete};
    case ErrorCode::kDuplicateSequenceNumber:
      return {.outcome = BatchOutcome::kCompleteDuplicate};
    case ErrorCode::kOutOfOrderSequenceNumber:
      return out_of_order(f);
    case ErrorCode::kUnknownProducerId:
      // log_start_offset -1: the broker cannot tell; a renumbered batch was
      // bumped for already.
      return f.log_start_offset_known && !f.renumbered ? retry_and_bump("unknown_producer_id") : retry();
    case ErrorCode::kInvalidProducerEpoch:
      // A replayed batch's epoch may be older than one the broker saw from
      // the previous process: renumbered under a new id and delivered.
      if (f.restored) return retry_and_bump("invalid_producer_epoch");
      return fail_and_bump("invalid_producer_epoch", "invalid producer epoch");
    case ErrorCode::kNotLeaderOrFollower:
    case ErrorCode::kFencedLeaderEpoch:
      return not_leader(f);
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kLeaderNotAvailable:
    case ErrorCode::kUnknownLeaderEpoch:
    case ErrorCode::kUnknownTopicId:
    case ErrorCode::kKafkaStorageError:
      return {.refresh_metadata = true};
    case ErrorCode::kNotEnoughReplicas:
      return retry();  // checked before the append: nothing was written
    case ErrorCode::kNotEnoughReplicasAfterAppend:
    case ErrorCode::kRequestTimedOut:
    case ErrorCode::kNetworkException:
      return {.mark_ambiguous = true};
    case ErrorCode::kCorruptMessage:
      // The bytes are ours: one retry, then give up.
      if (f.corrupt_responses <= 1) return retry();
      // Twice: brokers before 2.4 also say this for a refused record (a
      // null key on a compacted topic).
      if (may_bisect(f)) return {.outcome = BatchOutcome::kBisect};
      return fail_and_bump("corrupt_message", "the broker rejected the batch as corrupt twice");
    case ErrorCode::kMessageTooLarge:
      return message_too_large(f);
    case ErrorCode::kInvalidRecord:
    case ErrorCode::kInvalidTimestamp:
      return record_validation(error, f);
    case ErrorCode::kPolicyViolation:
      return refused_content(error, f);
    case ErrorCode::kClusterAuthorizationFailed:
    case ErrorCode::kUnsupportedVersion:
      return {.outcome = BatchOutcome::kFatal};
    default:
      break;
  }
  if (is_retriable(error)) return retry();
  // RECORD_LIST_TOO_LARGE, TOPIC_AUTHORIZATION_FAILED, ...: about the whole
  // batch or topic, so every run fails; not in the log. Its sequences now leave a
  // gap, so the later batches are renumbered under a new epoch.
  return fail_and_bump(error_name(error));
}

}  // namespace pp
