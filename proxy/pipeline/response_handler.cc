#include "proxy/pipeline/response_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>

#include "proxy/pipeline/batch_rebuild.h"

namespace pp {

namespace {

bool in_unacked(const PartitionState& p, const BatchPtr& b) {
  return std::find(p.unacked().begin(), p.unacked().end(), b) != p.unacked().end();
}

// Errors after which the answering broker's window says nothing about the
// partition's leader (learning the window, PIPELINE.md).
bool window_not_learnable(ErrorCode e) {
  return e == ErrorCode::kNotLeaderOrFollower || e == ErrorCode::kFencedLeaderEpoch ||
         e == ErrorCode::kUnknownTopicOrPartition || e == ErrorCode::kUnknownTopicId ||
         e == ErrorCode::kKafkaStorageError;
}

// KIP-1269 as first proposed puts the window in the partition's answer, as
// revised in the topic's (kTopicProducerStateBatchesToRetainTag, provisional).
// A tagged field at its default is never written (KIP-482), so a partition
// value other than 5 is one the broker sent, and it wins over the topic's;
// otherwise the topic's applies; neither sent means 5.
std::int32_t announced_window(const ProduceTopicResponse& topic, const ProducePartitionResponse& partition) {
  if (partition.producer_state_batches_to_retain != kDefaultBatchesToRetain) {
    return partition.producer_state_batches_to_retain;
  }
  return topic.producer_state_batches_to_retain;
}

// Enough halvings to single out two refused runs among `runs`: each one takes
// ceil(log2(runs)). Past it a refused part fails whole, so a partition-wide
// refusal costs O(log runs) resends, not O(runs).
std::int32_t bisection_budget(std::size_t runs) {
  const auto depth = static_cast<std::int32_t>(std::bit_width(runs - 1));
  return 2 * depth + 1;
}

}  // namespace

void ResponseHandler::on_produce_result(const InFlightRequest& request, ProduceResult result) {
  observer_.on_produce_response(request.node, clock_.now_ms() - request.sent_ms);
  if (!result) {
    for (const auto& b : request.batches) handle_batch(request, b, result.error(), Answer{});
    return;
  }
  const ProduceResponse& response = *result;
  // KIP-951: endpoints of new leaders first, so a hint naming one can be followed.
  if (!response.node_endpoints.empty()) upstream_.learn_brokers(response.node_endpoints);
  for (const auto& b : request.batches) {
    if (sent_under_old_id(request, b->tp)) {
      spdlog::info("{}: answer for the topic's old id (deleted and created again since): treating it as a timeout",
                   b->tp.to_string());
      handle_batch(request, b, ErrorCode::kRequestTimedOut, Answer{});
    } else if (const Answer found = find_answer(request, response, b->tp); found.partition) {
      handle_batch(request, b, found.partition->error_code, found);
    } else {
      spdlog::warn("broker {} answered without partition {}: treating it as a timeout", request.node,
                   b->tp.to_string());
      handle_batch(request, b, ErrorCode::kRequestTimedOut, Answer{});
    }
  }
}

ResponseHandler::Answer ResponseHandler::find_answer(const InFlightRequest& request, const ProduceResponse& response,
                                                     const TopicPartition& tp) const {
  const Uuid id = topics_.topic_id(tp.topic);
  Answer found;
  for (const auto& topic : response.responses) {
    const bool same_topic =
        request.version >= kProduceTopicIdVersion ? !id.is_zero() && topic.topic_id == id : topic.name == tp.topic;
    if (!same_topic) continue;
    for (const auto& part : topic.partition_responses) {
      if (part.index == tp.partition) found = Answer{&topic, &part};
    }
  }
  return found;
}

// The first-sequence rule (PIPELINE.md): an answer to a request sent under
// the topic's old id is about the deleted log, not the new one. Its outcome
// for the batch is unknown, as after a timeout: it is neither acknowledged
// nor refused by it, and nothing is learned from it (window, leader hints).
bool ResponseHandler::sent_under_old_id(const InFlightRequest& request, const TopicPartition& tp) const {
  const auto sent = request.topic_ids.find(tp.topic);
  if (sent == request.topic_ids.end() || sent->second.is_zero()) return false;
  const Uuid now = topics_.topic_id(tp.topic);
  return !now.is_zero() && now != sent->second;
}

void ResponseHandler::handle_batch(const InFlightRequest& request, const BatchPtr& b, ErrorCode error,
                                   const Answer& answer) {
  const ProducePartitionResponse* pr = answer.partition;
  auto found = partitions_.find(b->tp);
  if (found == partitions_.end()) return;  // not reached: a partition with a batch in flight is never retired
  PartitionState& p = *found->second;
  p.batch_returned();
  observer_.on_inflight_batches(b->tp, p.inflight_batches());
  if (p.draining() && p.inflight_batches() == 0) {
    spdlog::debug("{}: old leader drained; retries may go to leader {}", b->tp.to_string(), p.leader_id());
    p.set_draining(false);
  }
  if (!in_unacked(p, b)) return;  // already ended (aborted, or the producer went fatal)
  b->state = BatchState::kAwaitingRetry;
  learn_window(p, b, error, answer, request.version);
  if (error == ErrorCode::kCorruptMessage) ++b->corrupt_responses;
  const ResponseAction action = classify_response(error, facts_of(p, *b, pr));
  if (action.outcome == BatchOutcome::kComplete && request.node == p.leader_id()) p.set_leader_unconfirmed(false);
  apply(p, b, error, action, pr);
}

BatchFacts ResponseHandler::facts_of(const PartitionState& p, const ProducerBatch& b,
                                     const ProducePartitionResponse* pr) const {
  BatchFacts f;
  f.record_count = b.record_count;
  f.renumbered = b.renumbered;
  f.ever_ambiguous = b.ever_ambiguous;
  f.head_of_line = b.base_sequence == ProducerBatch::wrap_sequence(p.last_acked_sequence(), 1);
  f.unconfirmed_log = b.base_sequence != 0 && !p.acked_in_log();
  f.partition_unresolved = p.unresolved_next().has_value();
  f.first_unresolved = f.partition_unresolved && b.base_sequence == *p.unresolved_next();
  f.log_start_offset_known = pr && pr->log_start_offset != -1;
  // A hint naming a broker nobody described is not trusted: the metadata
  // refresh it then causes says who leads.
  f.newer_leader_hint = pr && pr->current_leader.leader_id >= 0 && pr->current_leader.leader_epoch >= 0 &&
                        pr->current_leader.leader_epoch > p.leader_epoch() &&
                        upstream_.knows_broker(pr->current_leader.leader_id);
  f.corrupt_responses = b.corrupt_responses;
  // Isolation needs every listed record inside this batch; an index
  // outside it says the broker meant another batch, so the whole one fails.
  f.record_errors_listed = pr && !pr->record_errors.empty() &&
                           std::all_of(pr->record_errors.begin(), pr->record_errors.end(), [&](const auto& e) {
                             return e.batch_index >= 0 && e.batch_index < b.record_count;
                           });
  f.client_runs = static_cast<std::int32_t>(b.pieces.size());
  f.bisections_spent = b.bisections_left && *b.bisections_left <= 0;
  f.restored = b.restored;
  return f;
}

void ResponseHandler::apply(PartitionState& p, const BatchPtr& b, ErrorCode error, const ResponseAction& action,
                            const ProducePartitionResponse* pr) {
  if (action.mark_ambiguous) b->ever_ambiguous = true;
  if (action.follow_leader_hint) {
    topics_.take_leader_hint(b->tp, pr->current_leader.leader_id, pr->current_leader.leader_epoch);
    upstream_.set_leaders_in_use(topics_.leader_nodes());
    leader_changed(p, pr->current_leader.leader_id, pr->current_leader.leader_epoch);
  }
  if (action.refresh_metadata) upstream_.request_metadata({b->tp.topic});
  // KAFKA-8483: only a batch of the current producer id may cause a bump;
  // and a replayed one, whatever id it carries (its renumbering takes a new id).
  const bool may_bump = !action.bump_reason.empty() && (b->producer_id == identity_.current().id || b->restored);
  switch (action.outcome) {
    case BatchOutcome::kComplete:
      completion_.complete(p, b, pr ? pr->base_offset : -1, pr);
      return;
    case BatchOutcome::kCompleteDuplicate:
      observer_.on_duplicate_sequence();
      completion_.complete(p, b, -1, pr);
      return;
    case BatchOutcome::kRetry:
      if (may_bump) bumper_.request(p, action.bump_reason);
      retry_later(p, b, error, clock_.now_ms());
      return;
    case BatchOutcome::kSplit:
      split(p, b);
      return;
    case BatchOutcome::kIsolate:
      isolate(p, b, error, *pr);
      if (may_bump) bumper_.request(p, action.bump_reason);
      return;
    case BatchOutcome::kBisect:
      bisect(p, b, error);
      return;
    case BatchOutcome::kFatal:
      fatal(error);
      return;
    case BatchOutcome::kFail:
      break;
  }
  if (error == ErrorCode::kInvalidProducerEpoch) {
    spdlog::warn("{}: INVALID_PRODUCER_EPOCH for seq {}: a second writer or a stale batch", b->tp.to_string(),
                 b->base_sequence);
  }
  std::string message(action.fail_message.empty() ? error_meaning(error) : action.fail_message);
  if (action.fail_message.empty() && pr && pr->error_message) message = *pr->error_message;
  completion_.fail(p, b, error, message);
  if (may_bump) bumper_.request(p, action.bump_reason);
}

void ResponseHandler::learn_window(PartitionState& p, const BatchPtr& b, ErrorCode error, const Answer& answer,
                                   std::int16_t version) {
  // Only the partition's current leader, unchanged since the send, speaks for it.
  if (!answer.partition || window_not_learnable(error) || b->sent_to_node != p.leader_id() ||
      b->sent_to_leader_epoch != p.leader_epoch()) {
    return;
  }
  // KIP-1269: an absent tag, or a response older than v14, means 5.
  const std::int32_t announced =
      version >= kProduceWindowVersion ? announced_window(*answer.topic, *answer.partition) : kDefaultBatchesToRetain;
  const std::int32_t window =
      std::clamp(announced, kInitialWindow, std::max(kInitialWindow, config_.max_partition_window));
  if (window != p.window()) {
    spdlog::info("{}: dedup window {} -> {} (leader {}, Produce v{})", p.tp().to_string(), p.window(), window,
                 p.leader_id(), version);
    p.set_window(window);
    observer_.on_window(p.tp(), window);
  }
}

void ResponseHandler::retry_later(PartitionState& p, const BatchPtr& b, ErrorCode error, std::int64_t now) {
  // A durable batch is on disk, replayed after a restart: retried until it
  // lands or fails for good.
  if (!b->durable && now - b->created_ms >= config_.delivery_timeout_ms) {
    spdlog::warn("{}: batch seq {}..{} reached its delivery timeout after {} attempts (last error {})",
                 b->tp.to_string(), b->base_sequence, b->last_sequence(), b->attempts, error_name(error));
    completion_.expire_sent(p, b);
    return;
  }
  const std::int64_t backoff = retry_backoff_ms(config_, b->attempts - 1);
  b->retry_at_ms = now + backoff;
  b->state = BatchState::kAwaitingRetry;
  // KIP-951 (ProducerBatch.hasLeaderChangedForTheOngoingRetry): the leader
  // moved since this attempt went out, so the retry goes to it at once.
  b->skip_backoff = b->sent_to_node != p.leader_id() || b->sent_to_leader_epoch != p.leader_epoch();
  observer_.on_retry(error);
  spdlog::debug("{}: retry seq {}..{} after {} (attempt {}, backoff {} ms)", b->tp.to_string(), b->base_sequence,
                b->last_sequence(), error_name(error), b->attempts, backoff);
}

void ResponseHandler::leader_changed(PartitionState& p, std::int32_t leader, std::int32_t epoch) {
  spdlog::info("{}: leader {} (epoch {}) -> {} (epoch {}); window {} -> {}", p.tp().to_string(), p.leader_id(),
               p.leader_epoch(), leader, epoch, p.window(), kInitialWindow);
  p.set_leader(leader, epoch);
  // The new leader's window is rediscovered from its first response.
  p.set_window(kInitialWindow);
  observer_.on_leader_change(p.tp());
  observer_.on_window_reset(p.tp());
  observer_.on_window(p.tp(), kInitialWindow);
  // Nothing goes to the new leader until the old one has answered for every
  // batch it holds (librdkafka "Leader change").
  p.set_draining(p.inflight_batches() > 0);
  p.set_leader_unconfirmed(true);
  for (const auto& b : p.unacked()) {
    if (b->state == BatchState::kAwaitingRetry) b->skip_backoff = true;
  }
}

// A retry of `from` carrying `pieces` (slices of its runs, in order): same
// partition, producer id, epoch, age and history, numbered from
// `base_sequence`. Built here because its boundaries differ from `from`'s (a
// split, an isolation or a bisection); charged to the budget like any built
// batch.
BatchPtr ResponseHandler::rebuild(const ProducerBatch& from, const std::vector<BatchPiece>& pieces,
                                  std::int32_t base_sequence) {
  return rebuild_batch(from, pieces, base_sequence, config_.compression, memory_);
}

// Splitting: halve a batch the broker found too large. Only done when no attempt
// may be in the log (the broker matches duplicates by exact sequence range).
void ResponseHandler::split(PartitionState& p, const BatchPtr& b) {
  const auto half = static_cast<std::uint32_t>(b->record_count / 2);
  std::vector<BatchPtr> pieces;
  for (std::int32_t part = 0; part < 2; ++part) {
    const std::uint32_t from = part == 0 ? 0 : half;
    const std::uint32_t to = part == 0 ? half : static_cast<std::uint32_t>(b->record_count);
    std::vector<BatchPiece> slices;
    for (const auto& bp : b->pieces) {
      const std::uint32_t lo = std::max(from, bp.offset_in_batch);
      const std::uint32_t hi = std::min(to, bp.offset_in_batch + bp.record_count);
      if (lo < hi) slices.push_back(BatchPiece{bp.run, bp.first_record + (lo - bp.offset_in_batch), hi - lo, 0});
    }
    pieces.push_back(
        rebuild(*b, slices, ProducerBatch::wrap_sequence(b->base_sequence, static_cast<std::int32_t>(from))));
  }
  for (const auto& bp : b->pieces) --bp.run->pieces_outstanding;
  spdlog::info("{}: MESSAGE_TOO_LARGE: split seq {}..{} into {} + {} records", p.tp().to_string(), b->base_sequence,
               b->last_sequence(), pieces[0]->record_count, pieces[1]->record_count);
  p.replace_with_split(b, pieces);
}

// Isolation: the broker refused the batch for the records record_errors lists
// (KIP-467) and appended none of it. The runs holding a listed record fail with
// the broker's error and message; the others are rebuilt into one batch that
// takes the refused one's place and first sequence, as a split piece does. It
// has fewer records, so the later batches' sequences no longer follow on: they
// come back OUT_OF_ORDER_SEQUENCE_NUMBER behind it, and the bump the caller
// requests renumbers the partition once none of it is in flight
// (drain-then-bump, "Epoch bump" in PIPELINE.md).
void ResponseHandler::isolate(PartitionState& p, const BatchPtr& b, ErrorCode error,
                              const ProducePartitionResponse& pr) {
  // Per piece: the first listed record in it, and the broker's word on it.
  std::vector<std::optional<std::pair<std::int32_t, std::string>>> refused(b->pieces.size());
  for (const auto& e : pr.record_errors) {
    const auto index = static_cast<std::uint32_t>(e.batch_index);
    for (std::size_t i = 0; i < b->pieces.size(); ++i) {
      const BatchPiece& piece = b->pieces[i];
      if (refused[i] || index < piece.offset_in_batch || index >= piece.offset_in_batch + piece.record_count) continue;
      refused[i].emplace(e.batch_index, e.batch_index_error_message.value_or(
                                            pr.error_message.value_or(std::string(error_meaning(error)))));
    }
  }
  std::vector<BatchPiece> kept;
  std::int64_t kept_records = 0;
  for (std::size_t i = 0; i < b->pieces.size(); ++i) {
    if (refused[i]) continue;
    kept.push_back(b->pieces[i]);
    kept_records += b->pieces[i].record_count;
  }
  std::int64_t refused_records = 0;
  for (std::size_t i = 0; i < b->pieces.size(); ++i) {
    if (!refused[i]) continue;
    refused_records += b->pieces[i].record_count;
    // The retry supersedes the batch's entry without these records.
    if (!kept.empty()) {
      journaling_.records_failed(*b->pieces[i].run, b->pieces[i].first_record, b->pieces[i].record_count, error,
                                 refused[i]->second);
    }
    spdlog::warn(
        "{}: {} for record {} of batch seq {}..{}: {}; its client run of {} records fails, {} records of "
        "other runs are resent",
        p.tp().to_string(), error_name(error), refused[i]->first, b->base_sequence, b->last_sequence(),
        refused[i]->second, b->pieces[i].record_count, kept_records);
  }
  if (kept.empty()) {
    journaling_.failed(*b, error, "every client run of the batch was refused");
    p.forget(b);
  } else {
    BatchPtr retry = rebuild(*b, kept, b->base_sequence);
    retry->retry_at_ms = 0;  // nothing was wrong with these records
    if (retry->ever_ambiguous) bumper_.count_ambiguous_renumbered(p, 1, "record_errors");
    for (const auto& piece : kept) --piece.run->pieces_outstanding;
    p.replace_with_split(b, {retry});
  }
  observer_.on_records_failed(error, refused_records);  // before the clients hear
  for (std::size_t i = 0; i < b->pieces.size(); ++i) {
    if (refused[i]) accumulator_.finish_piece(b->pieces[i], nullptr, error, refused[i]->second);
  }
}

// The broker appended none of `b` and used none of its sequences (the error
// came from LogValidator, before the producer state). Its runs are rebuilt into
// two batches, the first half of the runs and the second, that take its place
// in unacked and its sequences (rebuilt as a split is), so the batches behind
// it still follow on: those in flight come back OUT_OF_ORDER_SEQUENCE_NUMBER,
// are not head of line and only wait. No bump: that comes when a part holding
// one run is refused and fails (response handling, PIPELINE.md).
void ResponseHandler::bisect(PartitionState& p, const BatchPtr& b, ErrorCode error) {
  if (!b->bisections_left) b->bisections_left = std::make_shared<std::int32_t>(bisection_budget(b->pieces.size()));
  --*b->bisections_left;
  const std::size_t half = b->pieces.size() / 2;
  const std::vector<BatchPiece> front_pieces(b->pieces.begin(), b->pieces.begin() + static_cast<std::ptrdiff_t>(half));
  const std::vector<BatchPiece> back_pieces(b->pieces.begin() + static_cast<std::ptrdiff_t>(half), b->pieces.end());
  BatchPtr front = rebuild(*b, front_pieces, b->base_sequence);
  BatchPtr back = rebuild(*b, back_pieces, ProducerBatch::wrap_sequence(b->base_sequence, front->record_count));
  for (const BatchPtr& part : {front, back}) {
    part->bisections_left = b->bisections_left;
    part->corrupt_responses = b->corrupt_responses;  // a corrupt part is not retried once more
    part->retry_at_ms = 0;                           // resent at once: the refusal was not transient
  }
  for (const auto& piece : b->pieces) --piece.run->pieces_outstanding;
  spdlog::info(
      "{}: {} without record_errors for seq {}..{} ({} client runs): resent as {} + {} runs to find the "
      "refused ones ({} bisections left)",
      p.tp().to_string(), error_name(error), b->base_sequence, b->last_sequence(), b->pieces.size(),
      front_pieces.size(), back_pieces.size(), *b->bisections_left);
  // New boundaries: had an earlier attempt been appended, the broker could
  // not match these parts to it ("Possible duplicates", PIPELINE.md).
  if (b->ever_ambiguous) bumper_.count_ambiguous_renumbered(p, 1, "bisection");
  observer_.on_retry(error);
  p.replace_with_split(b, {front, back});
}

void ResponseHandler::fatal(ErrorCode error) {
  identity_.fail(error);
  completion_.abort_all(error);
}

}  // namespace pp
