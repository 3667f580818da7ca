#include "proxy/pipeline/sender.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace pp {

BatchPtr Sender::next_batch_for(PartitionState& p, std::int64_t now) {
  // The draining rules of docs/design/PIPELINE.md, in order. Skip: a leader
  // must be known and the old leader drained (leader change).
  if (p.leader_id() < 0 || p.draining()) return nullptr;
  // Runs were withdrawn from its refused batches: nothing goes until they
  // are rebuilt without them (RefusedBatchWithdrawal).
  if (p.rebuild_pending()) return nullptr;
  // The retry head: retries first, strictly in sequence order, one at a time.
  if (BatchPtr head = p.retry_head()) {
    if (!head->skip_backoff && now < head->retry_at_ms) return nullptr;
    // Renumbered or rebuilt: its new sequences are journaled first.
    if (!journaling_.ready_to_send(head, now)) return nullptr;
    return head;
  }
  if (p.has_awaiting_retry()) return nullptr;  // a lower sequence is still in flight
  // A new batch waiting for its journal entry: it goes next, and nothing new
  // is built behind it (order).
  if (BatchPtr unsent = p.unsent_batch()) {
    if (!journaling_.ready_to_send(unsent, now) || p.unsent_hold() != HoldReason::kNone) return nullptr;
    return unsent;
  }
  if (new_batches_held_) return nullptr;
  if (!batch_ready(p, now)) return nullptr;
  // The holds on a new head: may a new sequence start?
  const ProducerIdAndEpoch& current = identity_.current();
  const HoldReason hold = p.new_batch_hold(current);
  if (hold != HoldReason::kNone) {
    spdlog::trace("{}: new batch held: {}", p.tp().to_string(), to_string(hold));
    return nullptr;
  }
  // Lazy reset: an idle partition of an older epoch starts again at sequence 0.
  if (p.needs_reset(current)) {
    spdlog::debug("{}: sequences reset to 0 under producer id {} epoch {}", p.tp().to_string(), current.id.value,
                  current.epoch.value);
    p.reset_sequences(current);
  }
  // Sequences at drain time: built now, at the first send, never at enqueue.
  BatchPtr batch = accumulator_.build_batch(p, current, now);
  if (!journaling_.ready_to_send(batch, now)) {
    batch->state = BatchState::kUnsent;
    return nullptr;
  }
  return batch;
}

void Sender::drain(PartitionMap& partitions, std::int64_t now, const std::function<void(OutgoingProduce)>& send) {
  // Two polls per client request: the lists are members, so a poll
  // allocates nothing once they have grown.
  ready_.clear();
  leaderless_.clear();
  for (auto& [tp, p] : partitions) {
    if (p->queued_runs().empty() && !p->has_awaiting_retry() && !p->unsent_batch()) continue;
    if (p->leader_id() < 0) {
      leaderless_.push_back(tp.topic);
      continue;
    }
    ready_.emplace_back(p->leader_id(), p.get());
  }
  if (!leaderless_.empty()) upstream_.request_metadata(leaderless_);

  // By node, then partition: the same order every time, so round-robin is
  // fair across polls. Nodes are fixed here, as a send may change leaders.
  std::sort(ready_.begin(), ready_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->tp() < b.second->tp();
  });
  for (auto first = ready_.begin(); first != ready_.end();) {
    const std::int32_t node = first->first;
    const auto last = std::find_if(first, ready_.end(), [node](const auto& e) { return e.first != node; });
    drain_node(node, std::span(first, last), partitions, now, send);
    first = last;
  }
}

void Sender::drain_node(std::int32_t node, std::span<const std::pair<std::int32_t, PartitionState*>> list,
                        PartitionMap& partitions, std::int64_t now, const std::function<void(OutgoingProduce)>& send) {
  std::size_t& start = round_robin_[node];
  while (upstream_.can_send_produce(node)) {
    std::vector<BatchPtr> batches;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!batches.empty() && bytes + config_.batch_bytes > config_.max_request_bytes) break;
      PartitionState& p = *list[(start + i) % list.size()].second;
      BatchPtr b = next_batch_for(p, now);
      if (!b) continue;
      bytes += b->bytes.size();
      batches.push_back(std::move(b));
    }
    start = (start + 1) % list.size();
    if (batches.empty()) break;
    send(assemble(node, std::move(batches), partitions));
  }
}

OutgoingProduce Sender::assemble(std::int32_t node, std::vector<BatchPtr> batches, PartitionMap& partitions) {
  OutgoingProduce out;
  out.node = node;
  out.version = upstream_.produce_version(node);
  for (const auto& b : batches) {
    if (topics_.topic_id(b->tp.topic).is_zero()) {
      out.version = std::min<std::int16_t>(out.version, kProduceTopicIdVersion - 1);  // v13+ names topics by id only
    }
  }
  out.request.transactional_id = std::nullopt;
  out.request.acks = -1;
  out.request.timeout_ms = config_.request_timeout_ms;
  for (const auto& b : batches) {
    auto& topics = out.request.topic_data;
    auto it =
        std::find_if(topics.begin(), topics.end(), [&](const ProduceTopicData& t) { return t.name == b->tp.topic; });
    if (it == topics.end()) {
      ProduceTopicData topic;
      topic.name = b->tp.topic;
      topic.topic_id = topics_.topic_id(b->tp.topic);
      topics.push_back(std::move(topic));
      it = topics.end() - 1;
    }
    // The request borrows the batch's bytes (a scatter-gather write) and keeps
    // the batch alive until they are written. They are not changed meanwhile: a
    // batch is patched or rebuilt only once it is out of flight, after its
    // answer (all written) or its connection's close.
    RecordsView records;
    records.pieces = &b->bytes;
    records.owner = std::shared_ptr<const void>(b, &b->bytes);
    it->partition_data.push_back(ProducePartitionData{b->tp.partition, std::move(records), {}});
    mark_sent(*partitions.at(b->tp), *b, node);
  }
  out.batches = std::move(batches);
  return out;
}

void Sender::mark_sent(PartitionState& p, ProducerBatch& b, std::int32_t node) {
  observer_.on_batch_sent(b.tp, b.record_count, b.bytes.size(), /*retry=*/b.attempts > 0);
  b.state = BatchState::kInFlight;
  b.skip_backoff = false;
  ++b.attempts;
  b.sent_to_node = node;
  b.sent_to_leader_epoch = p.leader_epoch();
  p.batch_sent();
  observer_.on_inflight_batches(b.tp, p.inflight_batches());
}

std::int64_t Sender::next_send_ms(const PartitionState& p, std::int64_t now) const {
  if (!identity_.ready() || p.leader_id() < 0 || p.draining()) return -1;
  if (!upstream_.can_send_produce(p.leader_id())) return -1;
  if (BatchPtr head = p.retry_head()) {
    return journaling_.send_after_journal_ms(*head, head->skip_backoff ? now : head->retry_at_ms);
  }
  if (p.has_awaiting_retry()) return -1;
  if (BatchPtr unsent = p.unsent_batch()) {
    return p.unsent_hold() == HoldReason::kNone ? journaling_.send_after_journal_ms(*unsent, now) : -1;
  }
  if (new_batches_held_ || p.queued_runs().empty() || p.new_batch_hold(identity_.current()) != HoldReason::kNone) {
    return -1;
  }
  return batch_ready(p, now) ? now : p.queued_runs().front()->enqueued_ms + config_.linger_ms;
}

// Adaptive batching (a draining rule of PIPELINE.md; Nagle's rule with linger
// as its bound): a partition with nothing in flight sends what it has at once;
// while one of its batches is in flight, records gather until that answer comes
// back, the batch is full, or the oldest has waited linger_ms. Window room is
// the business of the holds on a new head, after this.
bool Sender::batch_ready(const PartitionState& p, std::int64_t now) const {
  if (p.queued_runs().empty()) return false;
  return p.inflight_batches() == 0 || accumulator_.linger_done(p, now);
}

}  // namespace pp
