// What a partition's answer to a Produce means for the batch it carried
// (docs/design/PIPELINE.md, "Response handling"), as one pure table from
// (error, facts about the batch) to an action. The producer applies the action;
// this file only decides, so the whole table is unit-tested row by row
// (tests/unit/pipeline/response_classifier_test.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "proxy/protocol/error_code.h"

namespace pp {

enum class BatchOutcome : std::uint8_t {
  kComplete,           // in the log at the answered offsets
  kCompleteDuplicate,  // DUPLICATE_SEQUENCE_NUMBER: an earlier attempt is in the log, offset unknown
  kRetry,              // send the same bytes again, in sequence order
  kSplit,              // too large: halve it (splitting)
  kFail,               // not in the log; its runs get the error
  kFatal,              // the producer cannot go on (identity FATAL)
  kIsolate,            // not in the log for the listed records' sake: fail their runs, resend the rest (isolation)
  kBisect,             // not in the log for some record's sake, none named: resend its runs in two halves (bisection)
};
std::string_view to_string(BatchOutcome outcome);

// The facts about the batch and its partition the table reads.
struct BatchFacts {
  std::int32_t record_count = 1;
  bool renumbered = false;              // re-stamped by an epoch bump
  bool ever_ambiguous = false;          // an earlier attempt may be in the log
  bool head_of_line = false;            // base sequence == last acked + 1
  bool unconfirmed_log = false;         // non-zero base sequence, and nothing acked by the partition's current log
  bool partition_unresolved = false;    // an expired batch's outcome is unknown
  bool first_unresolved = false;        // base sequence == the first unresolved one
  bool log_start_offset_known = false;  // the response carried one (v5+, not -1)
  bool newer_leader_hint = false;       // KIP-951 CurrentLeader with id, epoch >= 0 and a newer epoch
  std::int32_t corrupt_responses = 0;   // CORRUPT_MESSAGE answers so far, this one included
  bool record_errors_listed = false;    // v8+ record_errors, every batch_index inside the batch
  std::int32_t client_runs = 1;         // runs (client requests) with records in the batch
  bool bisections_spent = false;        // its original batch used up its bisection budget
  bool restored = false;                // replayed after a restart: the broker may have forgotten its producer
};

struct ResponseAction {
  BatchOutcome outcome = BatchOutcome::kRetry;
  bool mark_ambiguous = false;      // this attempt may be in the log
  bool refresh_metadata = false;    // ask upstream for the topic again
  bool follow_leader_hint = false;  // take CurrentLeader and NodeEndpoints now (leader change)
  std::string_view bump_reason;     // not empty: an epoch bump is needed
  std::string_view fail_message;    // for kFail; empty: the error's meaning or the broker's message
};

ResponseAction classify_response(ErrorCode error, const BatchFacts& facts);

}  // namespace pp
