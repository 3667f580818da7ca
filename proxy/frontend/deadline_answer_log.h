// The log of Produce requests answered at their deadline: one warning when
// they start (typically an upstream outage: leaders unreachable, the records
// cannot go out), one line when none has come for a quiet period, with what
// was answered meanwhile; every answer is counted in the metrics. So an
// outage is two log lines, however many requests it times out.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/frontend/frontend_observer.h"

namespace pp {

class DeadlineAnswerLog {
 public:
  // No deadline answer for this long ends an episode.
  static constexpr std::uint64_t kQuietMs = 10000;

  // One partition of a request answered at its deadline (`outcome`).
  void answered(DeadlineOutcome outcome, std::size_t records, std::string_view partition, std::uint64_t now_ms);
  // Ends an episode once it has been quiet for kQuietMs.
  void tick(std::uint64_t now_ms);
  bool in_episode() const { return in_episode_; }

 private:
  bool in_episode_ = false;
  std::uint64_t started_ms_ = 0;
  std::uint64_t last_ms_ = 0;
  std::uint64_t withdrawn_answers_ = 0;
  std::uint64_t withdrawn_records_ = 0;
  std::uint64_t in_flight_answers_ = 0;
  std::uint64_t in_flight_records_ = 0;
};

}  // namespace pp
