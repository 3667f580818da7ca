// Per partition: how many batches of each producer the cluster holds at once
// (received, response not yet written or dropped). A client that lets more
// than the leader's window be in flight can lose a retry's dedup
// (KAFKA-17926 / KAFKA-17927): that is the client bug this makes visible.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace pp::test_broker {

class InflightWatchdog {
 public:
  // Records a batch arriving. `window`: the receiving broker's retain (5 on a
  // legacy broker). Returns true if it is a violation: the producer already
  // had `window` batches held.
  bool on_received(std::int64_t producer_id, int window);
  void on_released(std::int64_t producer_id);

  int max_inflight() const { return max_inflight_; }
  std::int64_t violations() const { return violations_; }
  int held(std::int64_t producer_id) const;

 private:
  std::unordered_map<std::int64_t, int> held_;
  int max_inflight_ = 0;
  std::int64_t violations_ = 0;
};

}  // namespace pp::test_broker
