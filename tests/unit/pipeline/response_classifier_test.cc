// The C.6 error table (docs/design/PIPELINE.md), row by row: for each error
// and the facts that matter to it, the outcome, the side effects and whether
// an epoch bump follows.
#include "proxy/pipeline/response_classifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pp {
namespace {

struct Row {
  std::string name;
  ErrorCode error;
  BatchFacts facts;
  BatchOutcome outcome;
  std::string bump;  // "" = no bump
  bool ambiguous = false;
  bool refresh = false;
  bool follow_hint = false;
};

BatchFacts facts(auto&& edit) {
  BatchFacts f;
  f.record_count = 3;
  f.head_of_line = true;
  f.log_start_offset_known = true;
  edit(f);
  return f;
}
const auto kPlain = [](BatchFacts&) {};

std::vector<Row> table() {
  using O = BatchOutcome;
  using E = ErrorCode;
  return {
      {"none completes", E::kNone, facts(kPlain), O::kComplete, ""},
      {"duplicate completes without offsets", E::kDuplicateSequenceNumber, facts(kPlain), O::kCompleteDuplicate, ""},
      {"oosn head of line bumps", E::kOutOfOrderSequenceNumber, facts(kPlain), O::kRetry, "out_of_order_sequence"},
      {"oosn behind a failed predecessor waits", E::kOutOfOrderSequenceNumber,
       facts([](BatchFacts& f) { f.head_of_line = false; }), O::kRetry, ""},
      {"oosn of a renumbered batch waits", E::kOutOfOrderSequenceNumber,
       facts([](BatchFacts& f) { f.renumbered = true; }), O::kRetry, ""},
      {"oosn at the first unresolved sequence bumps", E::kOutOfOrderSequenceNumber, facts([](BatchFacts& f) {
         f.partition_unresolved = true;
         f.first_unresolved = true;
         f.head_of_line = false;
       }),
       O::kRetry, "out_of_order_after_unresolved"},
      {"oosn behind the first unresolved waits, even at head of line", E::kOutOfOrderSequenceNumber,
       facts([](BatchFacts& f) { f.partition_unresolved = true; }), O::kRetry, ""},
      {"unknown producer id with a log start offset bumps", E::kUnknownProducerId, facts(kPlain), O::kRetry,
       "unknown_producer_id"},
      {"unknown producer id without a log start offset retries", E::kUnknownProducerId,
       facts([](BatchFacts& f) { f.log_start_offset_known = false; }), O::kRetry, ""},
      {"unknown producer id of a renumbered batch retries", E::kUnknownProducerId,
       facts([](BatchFacts& f) { f.renumbered = true; }), O::kRetry, ""},
      {"invalid producer epoch fails and bumps", E::kInvalidProducerEpoch, facts(kPlain), O::kFail,
       "invalid_producer_epoch"},
      {"not leader without a hint refreshes", E::kNotLeaderOrFollower, facts(kPlain), O::kRetry, "", false, true},
      {"not leader with a newer hint follows it", E::kNotLeaderOrFollower,
       facts([](BatchFacts& f) { f.newer_leader_hint = true; }), O::kRetry, "", false, false, true},
      {"fenced leader epoch refreshes", E::kFencedLeaderEpoch, facts(kPlain), O::kRetry, "", false, true},
      {"unknown topic refreshes", E::kUnknownTopicOrPartition, facts(kPlain), O::kRetry, "", false, true},
      {"leader not available refreshes", E::kLeaderNotAvailable, facts(kPlain), O::kRetry, "", false, true},
      {"unknown leader epoch refreshes", E::kUnknownLeaderEpoch, facts(kPlain), O::kRetry, "", false, true},
      {"unknown topic id refreshes", E::kUnknownTopicId, facts(kPlain), O::kRetry, "", false, true},
      {"storage error refreshes", E::kKafkaStorageError, facts(kPlain), O::kRetry, "", false, true},
      {"not enough replicas retries, nothing written", E::kNotEnoughReplicas, facts(kPlain), O::kRetry, ""},
      {"not enough replicas after append is ambiguous", E::kNotEnoughReplicasAfterAppend, facts(kPlain), O::kRetry, "",
       true},
      {"request timed out is ambiguous", E::kRequestTimedOut, facts(kPlain), O::kRetry, "", true},
      {"network exception is ambiguous", E::kNetworkException, facts(kPlain), O::kRetry, "", true},
      {"first corrupt answer retries", E::kCorruptMessage, facts([](BatchFacts& f) { f.corrupt_responses = 1; }),
       O::kRetry, ""},
      {"second corrupt answer fails and bumps", E::kCorruptMessage,
       facts([](BatchFacts& f) { f.corrupt_responses = 2; }), O::kFail, "corrupt_message"},
      {"too large with several records splits", E::kMessageTooLarge, facts(kPlain), O::kSplit, ""},
      {"too large single record fails and bumps", E::kMessageTooLarge, facts([](BatchFacts& f) { f.record_count = 1; }),
       O::kFail, "message_too_large"},
      {"too large and ambiguous never splits", E::kMessageTooLarge,
       facts([](BatchFacts& f) { f.ever_ambiguous = true; }), O::kFail, "message_too_large"},
      {"cluster authorization is fatal", E::kClusterAuthorizationFailed, facts(kPlain), O::kFatal, ""},
      {"unsupported version is fatal", E::kUnsupportedVersion, facts(kPlain), O::kFatal, ""},
      {"invalid record fails and bumps", E::kInvalidRecord, facts(kPlain), O::kFail, "INVALID_RECORD"},
      {"invalid timestamp fails and bumps", E::kInvalidTimestamp, facts(kPlain), O::kFail, "INVALID_TIMESTAMP"},
      {"policy violation fails and bumps", E::kPolicyViolation, facts(kPlain), O::kFail, "POLICY_VIOLATION"},
      {"topic authorization fails and bumps", E::kTopicAuthorizationFailed, facts(kPlain), O::kFail,
       "TOPIC_AUTHORIZATION_FAILED"},
      {"record list too large fails and bumps", E::kRecordListTooLarge, facts(kPlain), O::kFail,
       "RECORD_LIST_TOO_LARGE"},
      {"invalid record with record errors isolates the listed runs", E::kInvalidRecord,
       facts([](BatchFacts& f) { f.record_errors_listed = true; }), O::kIsolate, "record_errors"},
      {"invalid timestamp with record errors isolates the listed runs", E::kInvalidTimestamp,
       facts([](BatchFacts& f) { f.record_errors_listed = true; }), O::kIsolate, "record_errors"},
      {"policy violation of one run fails it even with record errors", E::kPolicyViolation,
       facts([](BatchFacts& f) { f.record_errors_listed = true; }), O::kFail, "POLICY_VIOLATION"},
      {"invalid record of several runs without record errors bisects", E::kInvalidRecord,
       facts([](BatchFacts& f) { f.client_runs = 3; }), O::kBisect, ""},
      {"invalid timestamp of several runs without record errors bisects", E::kInvalidTimestamp,
       facts([](BatchFacts& f) { f.client_runs = 2; }), O::kBisect, ""},
      {"policy violation of several runs bisects, record errors or not", E::kPolicyViolation, facts([](BatchFacts& f) {
         f.client_runs = 2;
         f.record_errors_listed = true;
       }),
       O::kBisect, ""},
      {"second corrupt answer for several runs bisects", E::kCorruptMessage, facts([](BatchFacts& f) {
         f.corrupt_responses = 2;
         f.client_runs = 2;
       }),
       O::kBisect, ""},
      {"first corrupt answer for several runs still retries", E::kCorruptMessage, facts([](BatchFacts& f) {
         f.corrupt_responses = 1;
         f.client_runs = 2;
       }),
       O::kRetry, ""},
      {"no bisection once the budget is spent", E::kInvalidRecord, facts([](BatchFacts& f) {
         f.client_runs = 4;
         f.bisections_spent = true;
       }),
       O::kFail, "INVALID_RECORD"},
      {"topic authorization of several runs fails them all", E::kTopicAuthorizationFailed,
       facts([](BatchFacts& f) { f.client_runs = 3; }), O::kFail, "TOPIC_AUTHORIZATION_FAILED"},
      {"record list too large of several runs fails them all", E::kRecordListTooLarge,
       facts([](BatchFacts& f) { f.client_runs = 3; }), O::kFail, "RECORD_LIST_TOO_LARGE"},
      {"unsupported compression of several runs fails them all", E::kUnsupportedCompressionType,
       facts([](BatchFacts& f) { f.client_runs = 3; }), O::kFail, "UNSUPPORTED_COMPRESSION_TYPE"},
      {"record list too large concerns the batch even with record errors", E::kRecordListTooLarge,
       facts([](BatchFacts& f) { f.record_errors_listed = true; }), O::kFail, "RECORD_LIST_TOO_LARGE"},
      {"another retriable error retries", E::kNotController, facts(kPlain), O::kRetry, ""},
  };
}

TEST(ResponseClassifier, EveryRowOfTheErrorTable) {
  for (const Row& row : table()) {
    SCOPED_TRACE(row.name);
    const ResponseAction a = classify_response(row.error, row.facts);
    EXPECT_EQ(a.outcome, row.outcome) << to_string(a.outcome);
    EXPECT_EQ(std::string(a.bump_reason), row.bump);
    EXPECT_EQ(a.mark_ambiguous, row.ambiguous);
    EXPECT_EQ(a.refresh_metadata, row.refresh);
    EXPECT_EQ(a.follow_leader_hint, row.follow_hint);
  }
}

TEST(ResponseClassifier, FailuresSayWhyWhenTheErrorNameDoesNot) {
  EXPECT_EQ(classify_response(ErrorCode::kInvalidProducerEpoch, {}).fail_message, "invalid producer epoch");
  BatchFacts single;
  single.record_count = 1;
  EXPECT_EQ(classify_response(ErrorCode::kMessageTooLarge, single).fail_message,
            "a single record larger than the broker accepts");
  // The broker's own message (or the error's meaning) is used for the rest.
  EXPECT_TRUE(classify_response(ErrorCode::kInvalidRecord, {}).fail_message.empty());
}

}  // namespace
}  // namespace pp
