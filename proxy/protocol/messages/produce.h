// Produce (API key 0), v0-v14. Field list from Kafka's ProduceRequest.json and
// ProduceResponse.json; v13 (KIP-516) addresses topics by id, v14 (KIP-1269)
// adds ProducerStateBatchesToRetain. See docs/design/PIPELINE.md section A.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

// The first version where topics are named by id rather than by name (KIP-516).
inline constexpr std::int16_t kProduceTopicIdVersion = 13;

// KIP-1269: the leader announces how many batches per producer it retains for
// deduplication. Kept in one place so a later KIP revision moving the field is
// a one-line change (docs/design/PIPELINE.md, "Decisions of this project":
// where the v14 tag lives).
inline constexpr std::int16_t kProduceWindowVersion = 14;
inline constexpr std::int32_t kProducerStateBatchesToRetainTag = 1;
inline constexpr std::int32_t kDefaultBatchesToRetain = 5;
// Provisional until KIP-1269 is voted: the KIP's later revision moves
// ProducerStateBatchesToRetain into TopicProduceResponse (the topic config
// producer.state.batches.to.retain), and no published schema gives its tag
// yet. Tag 0 is TopicProduceResponse's first free tag. A response may carry
// either placement or both; the partition's value wins where it is present
// (docs/design/PIPELINE.md, "Learning the window").
inline constexpr std::int32_t kTopicProducerStateBatchesToRetainTag = 0;

struct ProducePartitionData {
  std::int32_t index = 0;
  RecordsView records;  // MessageSet (v0-2) or one RecordBatch v2 (v3+)
  RawTaggedFields unknown_tags;

  bool operator==(const ProducePartitionData&) const = default;
  static constexpr auto fields() {
    using S = ProducePartitionData;
    return std::tuple{
        field("index", &S::index, kAll),
        field("records", &S::records, kAll).nullable_in(kAll),
    };
  }
};

struct ProduceTopicData {
  std::string name;  // v0-12
  Uuid topic_id;     // v13+
  std::vector<ProducePartitionData> partition_data;
  RawTaggedFields unknown_tags;

  bool operator==(const ProduceTopicData&) const = default;
  static constexpr auto fields() {
    using S = ProduceTopicData;
    return std::tuple{
        field("name", &S::name, between(0, kProduceTopicIdVersion - 1)),
        field("topic_id", &S::topic_id, since(kProduceTopicIdVersion)),
        field("partition_data", &S::partition_data, kAll),
    };
  }
};

struct ProduceRequest {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  static constexpr Versions kVersions{0, 14};
  static constexpr std::int16_t kFlexibleSince = 9;

  std::optional<std::string> transactional_id;  // v3+
  std::int16_t acks = 0;
  std::int32_t timeout_ms = 0;
  std::vector<ProduceTopicData> topic_data;
  RawTaggedFields unknown_tags;

  bool operator==(const ProduceRequest&) const = default;
  // At least the request's encoded size, for sizing its frame once.
  std::size_t encoded_size_hint() const {
    std::size_t n = 16 + (transactional_id ? transactional_id->size() : 0);
    for (const auto& t : topic_data) {
      n += 32 + t.name.size();
      for (const auto& p : t.partition_data) n += 16 + p.records.size();
    }
    return n;
  }
  static constexpr auto fields() {
    using S = ProduceRequest;
    return std::tuple{
        field("transactional_id", &S::transactional_id, since(3)).nullable_in(since(3)),
        field("acks", &S::acks, kAll),
        field("timeout_ms", &S::timeout_ms, kAll),
        field("topic_data", &S::topic_data, kAll),
    };
  }
};

struct BatchIndexAndErrorMessage {
  std::int32_t batch_index = 0;
  std::optional<std::string> batch_index_error_message;
  RawTaggedFields unknown_tags;

  bool operator==(const BatchIndexAndErrorMessage&) const = default;
  static constexpr auto fields() {
    using S = BatchIndexAndErrorMessage;
    return std::tuple{
        field("batch_index", &S::batch_index, since(8)),
        field("batch_index_error_message", &S::batch_index_error_message, since(8)).nullable_in(since(8)),
    };
  }
};

// KIP-951: the leader a NOT_LEADER_OR_FOLLOWER answer points to.
struct LeaderIdAndEpoch {
  std::int32_t leader_id = -1;
  std::int32_t leader_epoch = -1;
  RawTaggedFields unknown_tags;

  bool operator==(const LeaderIdAndEpoch&) const = default;
  static constexpr auto fields() {
    using S = LeaderIdAndEpoch;
    return std::tuple{
        field("leader_id", &S::leader_id, since(10)),
        field("leader_epoch", &S::leader_epoch, since(10)),
    };
  }
};

struct ProducePartitionResponse {
  std::int32_t index = 0;
  ErrorCode error_code = ErrorCode::kNone;
  std::int64_t base_offset = 0;
  std::int64_t log_append_time_ms = -1;                                     // v2+
  std::int64_t log_start_offset = -1;                                       // v5+
  std::vector<BatchIndexAndErrorMessage> record_errors;                     // v8+
  std::optional<std::string> error_message;                                 // v8+
  LeaderIdAndEpoch current_leader;                                          // v10+, tag 0
  std::int32_t producer_state_batches_to_retain = kDefaultBatchesToRetain;  // v14+, tag 1
  RawTaggedFields unknown_tags;

  bool operator==(const ProducePartitionResponse&) const = default;
  static constexpr auto fields() {
    using S = ProducePartitionResponse;
    return std::tuple{
        field("index", &S::index, kAll),
        field("error_code", &S::error_code, kAll),
        field("base_offset", &S::base_offset, kAll),
        field("log_append_time_ms", &S::log_append_time_ms, since(2)),
        field("log_start_offset", &S::log_start_offset, since(5)),
        field("record_errors", &S::record_errors, since(8)),
        field("error_message", &S::error_message, since(8)).nullable_in(since(8)),
        field("current_leader", &S::current_leader, since(10)).tagged_as(0, since(10)),
        field("producer_state_batches_to_retain", &S::producer_state_batches_to_retain, since(kProduceWindowVersion))
            .tagged_as(kProducerStateBatchesToRetainTag, since(kProduceWindowVersion)),
    };
  }
};

struct ProduceTopicResponse {
  std::string name;  // v0-12
  Uuid topic_id;     // v13+
  std::vector<ProducePartitionResponse> partition_responses;
  std::int32_t producer_state_batches_to_retain = kDefaultBatchesToRetain;  // v14+, provisional tag 0
  RawTaggedFields unknown_tags;

  bool operator==(const ProduceTopicResponse&) const = default;
  static constexpr auto fields() {
    using S = ProduceTopicResponse;
    return std::tuple{
        field("name", &S::name, between(0, kProduceTopicIdVersion - 1)),
        field("topic_id", &S::topic_id, since(kProduceTopicIdVersion)),
        field("partition_responses", &S::partition_responses, kAll),
        field("producer_state_batches_to_retain", &S::producer_state_batches_to_retain, since(kProduceWindowVersion))
            .tagged_as(kTopicProducerStateBatchesToRetainTag, since(kProduceWindowVersion)),
    };
  }
};

struct NodeEndpoint {
  std::int32_t node_id = 0;
  std::string host;
  std::int32_t port = 0;
  std::optional<std::string> rack;
  RawTaggedFields unknown_tags;

  bool operator==(const NodeEndpoint&) const = default;
  static constexpr auto fields() {
    using S = NodeEndpoint;
    return std::tuple{
        field("node_id", &S::node_id, since(10)),
        field("host", &S::host, since(10)),
        field("port", &S::port, since(10)),
        field("rack", &S::rack, since(10)).nullable_in(since(10)),
    };
  }
};

struct ProduceResponse {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  static constexpr Versions kVersions{0, 14};
  static constexpr std::int16_t kFlexibleSince = 9;

  std::vector<ProduceTopicResponse> responses;
  std::int32_t throttle_time_ms = 0;         // v1+
  std::vector<NodeEndpoint> node_endpoints;  // v10+, tag 0
  RawTaggedFields unknown_tags;

  bool operator==(const ProduceResponse&) const = default;
  static constexpr auto fields() {
    using S = ProduceResponse;
    return std::tuple{
        field("responses", &S::responses, kAll),
        field("throttle_time_ms", &S::throttle_time_ms, since(1)),
        field("node_endpoints", &S::node_endpoints, since(10)).tagged_as(0, since(10)),
    };
  }
};

}  // namespace pp
