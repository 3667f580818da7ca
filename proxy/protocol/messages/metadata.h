// Metadata (API key 3), v0-v13. v7 adds leader epochs (KIP-320), v9 is the
// first flexible version, v10 adds topic ids (KIP-516), v12 makes names nullable,
// v13 (KIP-1102) adds a top-level ErrorCode to the response (e.g.
// REBOOTSTRAP_REQUIRED); the v13 request is the v12 one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

inline constexpr std::int32_t kAuthorizedOperationsOmitted = INT32_MIN;
// The first version whose topics carry their ids (KIP-516).
inline constexpr std::int16_t kMetadataTopicIdVersion = 10;

struct MetadataRequestTopic {
  Uuid topic_id;                    // v10+
  std::optional<std::string> name;  // nullable v10+
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataRequestTopic&) const = default;
  static constexpr auto fields() {
    using S = MetadataRequestTopic;
    return std::tuple{
        field("topic_id", &S::topic_id, since(kMetadataTopicIdVersion)),
        field("name", &S::name, kAll).nullable_in(since(kMetadataTopicIdVersion)),
    };
  }
};

struct MetadataRequest {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr Versions kVersions{0, 13};
  static constexpr std::int16_t kFlexibleSince = 9;

  // v0: an empty array means all topics. v1+: null means all, empty means none.
  std::optional<std::vector<MetadataRequestTopic>> topics = std::vector<MetadataRequestTopic>{};
  bool allow_auto_topic_creation = true;               // v4+
  bool include_cluster_authorized_operations = false;  // v8-10
  bool include_topic_authorized_operations = false;    // v8+
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataRequest&) const = default;
  static constexpr auto fields() {
    using S = MetadataRequest;
    return std::tuple{
        field("topics", &S::topics, kAll).nullable_in(since(1)),
        field("allow_auto_topic_creation", &S::allow_auto_topic_creation, since(4)),
        field("include_cluster_authorized_operations", &S::include_cluster_authorized_operations, between(8, 10)),
        field("include_topic_authorized_operations", &S::include_topic_authorized_operations, since(8)),
    };
  }
};

struct MetadataResponseBroker {
  std::int32_t node_id = 0;
  std::string host;
  std::int32_t port = 0;
  std::optional<std::string> rack;  // v1+
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataResponseBroker&) const = default;
  static constexpr auto fields() {
    using S = MetadataResponseBroker;
    return std::tuple{
        field("node_id", &S::node_id, kAll),
        field("host", &S::host, kAll),
        field("port", &S::port, kAll),
        field("rack", &S::rack, since(1)).nullable_in(since(1)),
    };
  }
};

struct MetadataResponsePartition {
  ErrorCode error_code = ErrorCode::kNone;
  std::int32_t partition_index = 0;
  std::int32_t leader_id = 0;
  std::int32_t leader_epoch = -1;  // v7+ (KIP-320)
  std::vector<std::int32_t> replica_nodes;
  std::vector<std::int32_t> isr_nodes;
  std::vector<std::int32_t> offline_replicas;  // v5+
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataResponsePartition&) const = default;
  static constexpr auto fields() {
    using S = MetadataResponsePartition;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("partition_index", &S::partition_index, kAll),
        field("leader_id", &S::leader_id, kAll),
        field("leader_epoch", &S::leader_epoch, since(7)),
        field("replica_nodes", &S::replica_nodes, kAll),
        field("isr_nodes", &S::isr_nodes, kAll),
        field("offline_replicas", &S::offline_replicas, since(5)),
    };
  }
};

struct MetadataResponseTopic {
  ErrorCode error_code = ErrorCode::kNone;
  std::optional<std::string> name = std::string();  // nullable v12+
  Uuid topic_id;                                    // v10+
  bool is_internal = false;                         // v1+
  std::vector<MetadataResponsePartition> partitions;
  std::int32_t topic_authorized_operations = kAuthorizedOperationsOmitted;  // v8+
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataResponseTopic&) const = default;
  static constexpr auto fields() {
    using S = MetadataResponseTopic;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("name", &S::name, kAll).nullable_in(since(12)),
        field("topic_id", &S::topic_id, since(kMetadataTopicIdVersion)),
        field("is_internal", &S::is_internal, since(1)),
        field("partitions", &S::partitions, kAll),
        field("topic_authorized_operations", &S::topic_authorized_operations, since(8)),
    };
  }
};

struct MetadataResponse {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr Versions kVersions{0, 13};
  static constexpr std::int16_t kFlexibleSince = 9;

  std::int32_t throttle_time_ms = 0;  // v3+
  std::vector<MetadataResponseBroker> brokers;
  std::optional<std::string> cluster_id;  // v2+
  std::int32_t controller_id = -1;        // v1+
  std::vector<MetadataResponseTopic> topics;
  std::int32_t cluster_authorized_operations = kAuthorizedOperationsOmitted;  // v8-10
  ErrorCode error_code = ErrorCode::kNone;                                    // v13+ (KIP-1102), after topics
  RawTaggedFields unknown_tags;

  bool operator==(const MetadataResponse&) const = default;
  static constexpr auto fields() {
    using S = MetadataResponse;
    return std::tuple{
        field("throttle_time_ms", &S::throttle_time_ms, since(3)),
        field("brokers", &S::brokers, kAll),
        field("cluster_id", &S::cluster_id, since(2)).nullable_in(since(2)),
        field("controller_id", &S::controller_id, since(1)),
        field("topics", &S::topics, kAll),
        field("cluster_authorized_operations", &S::cluster_authorized_operations, between(8, 10)),
        field("error_code", &S::error_code, since(13)),
    };
  }
};

}  // namespace pp
