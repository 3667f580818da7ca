// Draining (docs/design/PIPELINE.md C.4): which partition may send what, now, to which
// leader; building batches at first send; one request per round per node.
#include <spdlog/spdlog.h>

#include <map>

#include "proxy/pipeline/idempotent_producer.h"
#include "proxy/records/record_batch_builder.h"

namespace pp {

BatchPtr IdempotentProducer::next_batch_for(PartitionState& p, std::int64_t now) {
  // Rule 1: a leader must be known and the old leader drained (C.8).
  if (p.leader_id() < 0 || p.draining()) return nullptr;
  // Rule 2: retries first, strictly in sequence order, one at a time.
  if (BatchPtr head = p.retry_head()) {
    if (!head->skip_backoff && now < head->retry_at_ms) return nullptr;
    return head;
  }
  if (p.has_awaiting_retry()) return nullptr;  // a lower sequence is still in flight
  if (!accumulator_.linger_done(p, now)) return nullptr;
  // Rule 3: may a new sequence start?
  const ProducerIdAndEpoch& current = identity_.current();
  const HoldReason hold = p.new_batch_hold(current);
  if (hold != HoldReason::kNone) {
    spdlog::trace("{}: new batch held: {}", p.tp().to_string(), to_string(hold));
    return nullptr;
  }
  // Rule 4: an idle partition of an older epoch starts again at sequence 0.
  if (p.needs_reset(current)) {
    spdlog::debug("{}: sequences reset to 0 under producer id {} epoch {}", p.tp().to_string(),
                  current.id.value, current.epoch.value);
    p.reset_sequences(current);
  }
  // Rule 5: built now, at the first send (decision 5).
  return accumulator_.build_batch(p, current, now);
}

void IdempotentProducer::drain(std::int64_t now) {
  std::map<std::int32_t, std::vector<PartitionState*>> by_node;
  std::vector<std::string> leaderless;
  for (auto& [tp, p] : partitions_) {
    if (p->queued_runs().empty() && !p->has_awaiting_retry()) continue;
    if (p->leader_id() < 0) {
      leaderless.push_back(tp.topic);
      continue;
    }
    by_node[p->leader_id()].push_back(p.get());
  }
  if (!leaderless.empty()) upstream_.request_metadata(leaderless);

  for (auto& [node, list] : by_node) {
    // The same order every time, so round-robin is fair across polls.
    std::sort(list.begin(), list.end(),
              [](const PartitionState* a, const PartitionState* b) { return a->tp() < b->tp(); });
    std::size_t& start = round_robin_[node];
    while (upstream_.can_send_produce(node)) {
      std::vector<BatchPtr> batches;
      std::size_t bytes = 0;
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (!batches.empty() && bytes + config_.batch_bytes > config_.max_request_bytes) break;
        PartitionState& p = *list[(start + i) % list.size()];
        BatchPtr b = next_batch_for(p, now);
        if (!b) continue;
        bytes += b->bytes.size();
        batches.push_back(std::move(b));
      }
      start = (start + 1) % list.size();
      if (batches.empty()) break;
      send_request(node, std::move(batches), now);
    }
  }
}

void IdempotentProducer::send_request(std::int32_t node, std::vector<BatchPtr> batches, std::int64_t now) {
  std::int16_t version = upstream_.produce_version(node);
  for (const auto& b : batches) {
    if (topics_.topic_id(b->tp.topic).is_zero()) {
      version = std::min<std::int16_t>(version, kProduceTopicIdVersion - 1);  // v13+ names topics by id only
    }
  }
  ProduceRequest request;
  request.transactional_id = std::nullopt;
  request.acks = -1;
  request.timeout_ms = config_.request_timeout_ms;
  for (const auto& b : batches) {
    auto it = std::find_if(request.topic_data.begin(), request.topic_data.end(),
                           [&](const ProduceTopicData& t) { return t.name == b->tp.topic; });
    if (it == request.topic_data.end()) {
      ProduceTopicData topic;
      topic.name = b->tp.topic;
      topic.topic_id = topics_.topic_id(b->tp.topic);
      request.topic_data.push_back(std::move(topic));
      it = request.topic_data.end() - 1;
    }
    it->partition_data.push_back(ProducePartitionData{b->tp.partition, RecordsView{ByteView(b->bytes)}, {}});

    PartitionState& p = state_for(b->tp);
    observer_->on_batch_sent(b->tp, b->record_count, b->bytes.size(), /*retry=*/b->attempts > 0);
    b->state = BatchState::kInFlight;
    b->skip_backoff = false;
    ++b->attempts;
    b->sent_to_node = node;
    b->sent_to_leader_epoch = p.leader_epoch();
    p.batch_sent();
    observer_->on_inflight_batches(b->tp, p.inflight_batches());
  }
  auto req = std::make_shared<Request>();
  req->node = node;
  req->version = version;
  req->sent_ms = now;
  req->batches = std::move(batches);
  observer_->on_produce_request(node);
  upstream_.send_produce(node, request, version, [this, alive = alive_, req](std::int16_t sent, ProduceResult result) {
    if (!*alive) return;
    req->version = sent;
    on_produce_result(req, std::move(result));
    wake();
  });
}

std::int64_t IdempotentProducer::next_wakeup_ms() const {
  const std::int64_t now = clock_.now_ms();
  std::int64_t earliest = -1;
  auto consider = [&](std::int64_t t) {
    if (earliest < 0 || t < earliest) earliest = std::max(t, now);
  };
  if (accumulator_.has_deferred()) consider(now);
  if (identity_.state() == IdentityState::kUninitialized) consider(identity_.retry_at_ms());
  for (const auto& [tp, p] : partitions_) {
    if (!p->queued_runs().empty()) {
      consider(p->queued_runs().front()->enqueued_ms + config_.delivery_timeout_ms);
    }
    for (const auto& b : p->unacked()) consider(b->created_ms + config_.delivery_timeout_ms);
    if (!identity_.ready() || p->leader_id() < 0 || p->draining()) continue;
    // Only work that can go once its time comes: a held partition or a busy
    // connection wakes us by an event instead (rule 6: no busy loop).
    if (!upstream_.can_send_produce(p->leader_id())) continue;
    if (BatchPtr head = p->retry_head()) {
      consider(head->skip_backoff ? now : head->retry_at_ms);
    } else if (!p->has_awaiting_retry() && !p->queued_runs().empty() &&
               p->new_batch_hold(identity_.current()) == HoldReason::kNone) {
      consider(accumulator_.linger_done(*p, now) ? now : p->queued_runs().front()->enqueued_ms + config_.linger_ms);
    }
  }
  return earliest;
}

}  // namespace pp
