// A scripted UpstreamPort: records what the pipeline sends and lets a test
// answer each request as it likes, under a manual clock (docs/design/ARCHITECTURE.md rule 3).
#pragma once

#include <deque>
#include <map>
#include <set>

#include "proxy/pipeline/idempotent_producer.h"
#include "proxy/records/record_batch.h"

namespace pp::testing {

struct SentBatch {
  TopicPartition tp;
  Uuid topic_id;
  Bytes bytes;                     // as encoded at send time
  std::vector<ByteView> borrowed;  // slices of `bytes` the batch did not copy, where they lie
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t record_count = 0;
};

struct SentProduce {
  std::int32_t node = -1;
  std::int16_t version = 0;
  std::vector<SentBatch> batches;
  std::function<void(ProduceResult)> done;
};

// Where a v14 answer writes the window (KIP-1269's two placements): the
// partition's tag, the topic's provisional tag, or both.
enum class WindowPlacement : std::uint8_t { kPartition, kTopic, kBoth };

struct PartitionAnswer {
  ErrorCode error = ErrorCode::kNone;
  std::int64_t base_offset = 0;
  std::int32_t window = 5;  // written as the v14 tag(s) of ScriptedUpstream::window_placement
  LeaderIdAndEpoch current_leader;
  std::int64_t log_start_offset = 0;
  std::vector<BatchIndexAndErrorMessage> record_errors;  // v8+ (KIP-467)
  std::optional<std::string> error_message;
  // The topic's tag when it must differ from `window` (v14 only), whatever
  // the placement: the first batch's answer speaks for its topic.
  std::optional<std::int32_t> topic_window;
};

class ScriptedUpstream final : public UpstreamPort {
 public:
  // Set by tests parametrised over the placements; reset by PipelineFixture.
  static inline WindowPlacement window_placement = WindowPlacement::kPartition;
  std::map<std::int32_t, bool> node_ready;
  std::map<std::int32_t, std::int16_t> node_version;
  // A connection that negotiated less than produce_version() said: requests
  // go out (and are reported) as this version.
  std::map<std::int32_t, std::int16_t> node_sends_as;
  std::int32_t max_in_flight_per_connection = 32;
  std::deque<SentProduce> outstanding;  // in send order
  std::vector<std::function<void(InitProducerIdResult)>> init_requests;
  std::set<std::string> metadata_requested;
  std::vector<std::int32_t> resets;
  std::set<std::int32_t> learned_brokers;
  std::set<std::int32_t> leaders_in_use;
  std::int64_t produce_requests_sent = 0;

  bool can_send_produce(std::int32_t node) override {
    return node_ready[node] && inflight(node) < max_in_flight_per_connection;
  }
  std::int16_t produce_version(std::int32_t node) override {
    auto it = node_version.find(node);
    return it == node_version.end() ? 14 : it->second;
  }
  void send_produce(std::int32_t node, const ProduceRequest& request, std::int16_t version, ProduceDone done) override {
    if (auto lower = node_sends_as.find(node); lower != node_sends_as.end()) version = std::min(version, lower->second);
    SentProduce sent{
        node, version, {}, [done = std::move(done), version](ProduceResult r) { done(version, std::move(r)); }};
    for (const auto& topic : request.topic_data) {
      for (const auto& part : topic.partition_data) {
        SentBatch b;
        b.tp = TopicPartition{topic.name, part.index};
        b.topic_id = topic.topic_id;
        b.bytes = part.records.flatten();
        if (part.records.pieces != nullptr) {
          for (const auto& slice : part.records.pieces->borrowed) b.borrowed.push_back(slice.bytes);
        }
        auto header = decode_record_batch_header(b.bytes);
        b.producer_id = header->producer_id;
        b.producer_epoch = header->producer_epoch;
        b.base_sequence = header->base_sequence;
        b.record_count = header->records_count;
        sent.batches.push_back(std::move(b));
      }
    }
    ++produce_requests_sent;
    outstanding.push_back(std::move(sent));
  }
  void send_init_producer_id(const InitProducerIdRequest&, std::function<void(InitProducerIdResult)> done) override {
    init_requests.push_back(std::move(done));
  }
  void request_metadata(const std::vector<std::string>& topics) override {
    metadata_requested.insert(topics.begin(), topics.end());
  }
  void reset_connection(std::int32_t node) override {
    resets.push_back(node);
    std::deque<SentProduce> keep;
    std::vector<SentProduce> failed;
    for (auto& s : outstanding) (s.node == node ? failed.emplace_back(std::move(s)) : keep.emplace_back(std::move(s)));
    outstanding = std::move(keep);
    for (auto& s : failed) s.done(std::unexpected(ErrorCode::kNetworkException));
  }
  void learn_brokers(const std::vector<NodeEndpoint>& endpoints) override {
    for (const auto& e : endpoints) learned_brokers.insert(e.node_id);
  }
  // Every node the test made ready, or named in NodeEndpoints.
  bool knows_broker(std::int32_t node) const override {
    return node_ready.contains(node) || learned_brokers.contains(node);
  }
  void set_leaders_in_use(const std::set<std::int32_t>& nodes) override { leaders_in_use = nodes; }

  int inflight(std::int32_t node) const {
    int n = 0;
    for (const auto& s : outstanding) n += s.node == node;
    return n;
  }

  // Grants the pending InitProducerId.
  void grant_producer_id(std::int64_t id, std::int16_t epoch = 0) {
    auto done = std::move(init_requests.front());
    init_requests.erase(init_requests.begin());
    InitProducerIdResponse r;
    r.producer_id = ProducerId(id);
    r.producer_epoch = ProducerEpoch(epoch);
    done(r);
  }

  // Takes the oldest outstanding request (of `node`, if given).
  SentProduce take(std::int32_t node = -1) {
    for (auto it = outstanding.begin(); it != outstanding.end(); ++it) {
      if (node < 0 || it->node == node) {
        SentProduce s = std::move(*it);
        outstanding.erase(it);
        return s;
      }
    }
    throw std::runtime_error("no outstanding request");
  }

  // Takes the oldest outstanding request carrying a batch of topic/partition.
  SentProduce take_with(const std::string& topic, std::int32_t partition) {
    for (auto it = outstanding.begin(); it != outstanding.end(); ++it) {
      for (const auto& b : it->batches) {
        if (b.tp.topic == topic && b.tp.partition == partition) {
          SentProduce s = std::move(*it);
          outstanding.erase(it);
          return s;
        }
      }
    }
    throw std::runtime_error("no outstanding request for " + topic + "-" + std::to_string(partition));
  }

  // Answers every batch of `s` with the answer `pick` gives it.
  static void answer(SentProduce& s, const std::function<PartitionAnswer(const SentBatch&)>& pick) {
    ProduceResponse resp;
    for (const auto& b : s.batches) {
      const PartitionAnswer a = pick(b);
      auto it = std::find_if(resp.responses.begin(), resp.responses.end(),
                             [&](const ProduceTopicResponse& t) { return t.name == b.tp.topic; });
      if (it == resp.responses.end()) {
        ProduceTopicResponse topic;
        topic.name = b.tp.topic;
        topic.topic_id = b.topic_id;
        if (s.version >= 14 && window_placement != WindowPlacement::kPartition) {
          topic.producer_state_batches_to_retain = a.window;  // the first batch's answer speaks for the topic
        }
        if (s.version >= 14 && a.topic_window) topic.producer_state_batches_to_retain = *a.topic_window;
        resp.responses.push_back(std::move(topic));
        it = resp.responses.end() - 1;
      }
      ProducePartitionResponse pr;
      pr.index = b.tp.partition;
      pr.error_code = a.error;
      pr.base_offset = a.error == ErrorCode::kNone ? a.base_offset : -1;
      pr.log_start_offset = a.log_start_offset;
      pr.producer_state_batches_to_retain =
          s.version >= 14 && window_placement != WindowPlacement::kTopic ? a.window : 5;
      pr.current_leader = a.current_leader;
      pr.record_errors = a.record_errors;
      pr.error_message = a.error_message;
      it->partition_responses.push_back(pr);
    }
    s.done(resp);
  }
  static void fail(SentProduce& s, ErrorCode transport_error) { s.done(std::unexpected(transport_error)); }
};

inline MetadataUpdate leaders(const std::string& topic, std::vector<std::pair<int, int>> leader_and_epoch) {
  TopicLeadership t;
  t.topic_id.bytes[0] = 7;
  for (auto [leader, epoch] : leader_and_epoch)
    t.partitions.push_back(PartitionLeadership{ErrorCode::kNone, leader, epoch});
  return MetadataUpdate{{{topic, t}}};
}

}  // namespace pp::testing
