// One acks 1/-1 Produce request waiting for its partitions' results: the
// response skeleton, each partition's answer, and the request's deadline.
// Held by the completions of its partitions' runs (shared ownership); it
// answers through its slot once every partition is answered, by its result
// or at the request's deadline, whichever comes first. Loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/frontend/client_producers.h"
#include "proxy/frontend/client_session.h"
#include "proxy/frontend/frontend_context.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {

class PendingProduce final : public DeadlineTarget, public std::enable_shared_from_this<PendingProduce> {
 public:
  // The skeleton: one entry per partition of `request`, in its order; the
  // client's response slot is reserved now.
  PendingProduce(ClientSession& session, std::int16_t version, std::int32_t correlation_id,
                 const ProduceRequest& request, std::uint64_t received_ms);
  ~PendingProduce();
  PendingProduce(const PendingProduce&) = delete;
  PendingProduce& operator=(const PendingProduce&) = delete;

  std::size_t entries() const { return entries_.size(); }
  // The principal's produce quota throttled this request's connection for
  // `ms` (KIP-219): the response's throttle_time_ms is at least that.
  void set_quota_throttle_ms(std::uint64_t ms) { quota_throttle_ms_ = ms; }
  std::uint64_t received_ms() const { return received_ms_; }

  // Before the first answer: how many answers are still to come, the run
  // the sink took for entry i and its record count.
  void expect_answers(std::size_t n) { outstanding_ = n; }
  void set_run(std::size_t i, RunTicket ticket, std::uint32_t records) {
    entries_[i].ticket = std::move(ticket);
    entries_[i].records = records;
  }
  // Takes one answer off the count without answering any entry (the
  // submitter's own guard against finishing before every run is in).
  void release_guard() {
    if (--outstanding_ == 0) finish();
  }

  // Entry i's answer; the first one given counts, later ones (the upstream
  // result of records answered at the deadline) are dropped.
  void answer(std::size_t i, ErrorCode error, const RunResult* result, std::string_view message);
  void answer(std::size_t i, const ClientBatchOutcome& o);
  // Every entry answered `error` (a request refused whole).
  void answer_all(ErrorCode error, std::string_view message);
  bool finished() const { return outstanding_ == 0; }

  // The client's deadline: entries still queued in the sink are withdrawn
  // (their completions answer them inside withdraw()), the others are
  // answered REQUEST_TIMED_OUT, in flight.
  void on_deadline() override;

 private:
  ProducePartitionResponse& entry(std::size_t i) {
    return response_.responses[entries_[i].topic].partition_responses[entries_[i].partition];
  }
  void set_result(std::size_t i, ErrorCode error, const RunResult* result, std::string_view message);
  void count_deadline_answer(DeadlineOutcome outcome, std::size_t i, std::uint64_t now);
  void cancel_deadline();
  void finish();

  ResponseSlot slot_;
  std::int16_t version_ = 0;
  std::int16_t acks_ = 1;
  std::int32_t correlation_id_ = 0;
  std::uint64_t received_ms_ = 0;
  std::uint64_t backpressure_ms_at_receive_ = 0;
  std::uint64_t quota_throttle_ms_ = 0;
  std::shared_ptr<FrontendContext> context_;
  ProduceResponse response_;
  // Flat entry index -> (topic, partition) position in `response_`.
  // One per partition of the request, in its order: where its answer goes
  // in `response_`, the run the sink took (withdrawn at the deadline if it
  // is still queued), its record count, and whether it is answered.
  struct Entry {
    std::size_t topic = 0;
    std::size_t partition = 0;
    RunTicket ticket;
    std::uint32_t records = 0;
    bool answered = false;
  };
  std::vector<Entry> entries_;
  std::size_t outstanding_ = 0;
};

}  // namespace pp
