#include "proxy/frontend/pending_produce.h"

#include <algorithm>

#include "proxy/frontend/log.h"
#include "proxy/protocol/codec.h"

namespace pp {

PendingProduce::PendingProduce(ClientSession& session, std::int16_t version, std::int32_t correlation_id,
                               const ProduceRequest& request, std::uint64_t received_ms)
    : slot_(session.reserve_response()),
      version_(version),
      acks_(request.acks),
      correlation_id_(correlation_id),
      received_ms_(received_ms),
      backpressure_ms_at_receive_(session.context().backpressure_ms()),
      context_(session.shared_context()) {
  for (const ProduceTopicData& t : request.topic_data) {
    ProduceTopicResponse& topic = response_.responses.emplace_back();
    topic.name = t.name;
    topic.topic_id = t.topic_id;
    for (const ProducePartitionData& p : t.partition_data) {
      topic.partition_responses.emplace_back().index = p.index;
      entries_.push_back(Entry{response_.responses.size() - 1, topic.partition_responses.size() - 1, {}, 0, false});
    }
  }
  outstanding_ = entries_.size();
}

PendingProduce::~PendingProduce() {
  cancel_deadline();
}

void PendingProduce::set_result(std::size_t i, ErrorCode error, const RunResult* result, std::string_view message) {
  ProducePartitionResponse& p = entry(i);
  p.error_code = error;
  if (result && error == ErrorCode::kNone) {
    p.base_offset = result->base_offset;
    p.log_append_time_ms = result->log_append_time_ms;
    p.log_start_offset = result->log_start_offset;
  } else {
    p.base_offset = -1;
    if (result) p.log_start_offset = result->log_start_offset;
    if (error != ErrorCode::kNone && !message.empty()) p.error_message = std::string(message);
  }
}

void PendingProduce::answer(std::size_t i, ErrorCode error, const RunResult* result, std::string_view message) {
  if (entries_[i].answered) return;
  entries_[i].answered = true;
  set_result(i, error, result, message);
  // Withdrawn at this request's deadline or, barred, at an earlier request's.
  if (result && result->withdrawn) count_deadline_answer(DeadlineOutcome::kWithdrawn, i, uv_now(context_->loop));
  if (--outstanding_ == 0) finish();
}

void PendingProduce::answer(std::size_t i, const ClientBatchOutcome& o) {
  RunResult r{o.error,         o.base_offset, o.log_append_time_ms, o.log_start_offset,
              o.error_message, o.withdrawn,   o.maybe_written};
  answer(i, o.error, &r, o.error_message);
}

void PendingProduce::answer_all(ErrorCode error, std::string_view message) {
  if (entries_.empty()) {
    finish();  // a request naming no partition still gets its (empty) answer
    return;
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) answer(i, error, nullptr, message);
}

void PendingProduce::on_deadline() {
  const std::shared_ptr<PendingProduce> self = shared_from_this();  // answers may drop the last other owner
  const std::uint64_t now = uv_now(context_->loop);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].answered) continue;
    if (context_->sink.withdraw(entries_[i].ticket) == WithdrawOutcome::kWithdrawn) {
      // Answered and counted inside withdraw(), by its completion; the same
      // answer here covers a completion that does not reach this entry.
      RunResult withdrawn;
      withdrawn.withdrawn = true;
      answer(i, ErrorCode::kNotEnoughReplicas, &withdrawn,
             "withdrawn at the request's deadline: none of its records was sent upstream");
    } else {
      answer(i, ErrorCode::kRequestTimedOut, nullptr,
             "in flight upstream at the request's deadline: the records may still be written");
      count_deadline_answer(DeadlineOutcome::kInFlight, i, now);
    }
  }
}

void PendingProduce::count_deadline_answer(DeadlineOutcome outcome, std::size_t i, std::uint64_t now) {
  FrontendContext& ctx = *context_;
  if (outcome == DeadlineOutcome::kWithdrawn) {
    ++ctx.counters.deadline_withdrawn_total;
  } else {
    ++ctx.counters.deadline_in_flight_total;
  }
  if (!ctx.stopped) ctx.observer.on_deadline_answer(outcome, entries_[i].records);
  const std::string partition = response_.responses[entries_[i].topic].name + "-" + std::to_string(entry(i).index);
  ctx.deadline_log.answered(outcome, entries_[i].records, partition, now);
  const auto session = slot_.session();
  frontend::log().debug("{}: Produce v{} to {} answered at its deadline, {} ms after receipt: {} ({} records)",
                        session ? session->describe() : std::string("a closed connection"), version_, partition,
                        now - received_ms_, to_string(outcome), entries_[i].records);
}

void PendingProduce::cancel_deadline() {
  if (context_ && context_->deadlines) context_->deadlines->cancel(*this);
}

void PendingProduce::finish() {
  cancel_deadline();
  // The client left or the front end stopped: there is no one to tell, and
  // the observer may be gone.
  if (!slot_.session()) return;
  FrontendContext& ctx = *context_;
  // throttle_time_ms (v1+): how long back-pressure held this request, so a
  // client that honours it (KIP-219) slows down instead of piling on.
  const std::uint64_t held = ctx.backpressure_ms() - backpressure_ms_at_receive_;
  if (held > 0 || ctx.paused()) {
    response_.throttle_time_ms = static_cast<std::int32_t>(std::clamp<std::uint64_t>(held, 1, INT32_MAX));
  }
  if (quota_throttle_ms_ > static_cast<std::uint64_t>(response_.throttle_time_ms)) {
    response_.throttle_time_ms = static_cast<std::int32_t>(std::min<std::uint64_t>(quota_throttle_ms_, INT32_MAX));
  }
  ctx.observer.on_produce_done(acks_, static_cast<std::int64_t>(uv_now(ctx.loop) - received_ms_));
  slot_.send(encode_response_frame(correlation_id_, version_, response_));
}

}  // namespace pp
