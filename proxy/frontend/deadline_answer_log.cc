#include "proxy/frontend/deadline_answer_log.h"

#include "proxy/frontend/log.h"

namespace pp {

void DeadlineAnswerLog::answered(DeadlineOutcome outcome, std::size_t records, std::string_view partition,
                                 std::uint64_t now_ms) {
  if (!in_episode_) {
    in_episode_ = true;
    started_ms_ = now_ms;
    withdrawn_answers_ = withdrawn_records_ = in_flight_answers_ = in_flight_records_ = 0;
    frontend::log().warn(
        "Produce requests reach their deadline before the upstream acknowledges them (first: {}): answering each "
        "by its deadline from now on; records not yet sent upstream are withdrawn (NOT_ENOUGH_REPLICAS), records in "
        "flight are answered REQUEST_TIMED_OUT",
        partition);
  }
  last_ms_ = now_ms;
  if (outcome == DeadlineOutcome::kWithdrawn) {
    ++withdrawn_answers_;
    withdrawn_records_ += records;
  } else {
    ++in_flight_answers_;
    in_flight_records_ += records;
  }
}

void DeadlineAnswerLog::tick(std::uint64_t now_ms) {
  if (!in_episode_ || now_ms - last_ms_ < kQuietMs) return;
  in_episode_ = false;
  frontend::log().info(
      "no Produce request has reached its deadline for {} s: over the {} s before, {} partition answers ({} records) "
      "were withdrawn unsent and {} ({} records) timed out in flight",
      kQuietMs / 1000, (last_ms_ - started_ms_) / 1000, withdrawn_answers_, withdrawn_records_, in_flight_answers_,
      in_flight_records_);
}

}  // namespace pp
