// Fetch (API key 1), v4-v12: the versions the consumers in front of this proxy
// use (librdkafka 2.0.2 / kcat, kafka-python). Field facts from Kafka's
// FetchRequest.json and FetchResponse.json.
//
// v4 needs RecordBatch v2 and adds read_committed (KIP-98), v5 log start
// offsets (KIP-107), v7 incremental fetch sessions (KIP-227), v9 the fencing
// leader epoch (KIP-320), v10 ZSTD (KIP-110), v11 fetch from the closest
// replica (KIP-392), v12 flexible (KIP-482) with the Raft fields of KIP-595.
// Later versions, not described here: v13 topic ids (KIP-516), v15
// ReplicaState tag 1 replaces replica_id (KIP-903), v16 NodeEndpoints tag 0
// (KIP-951), v17 ReplicaDirectoryId partition tag 0 (KIP-853).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct FetchPartition {
  std::int32_t partition = 0;
  std::int32_t current_leader_epoch = -1;  // v9+ (KIP-320)
  std::int64_t fetch_offset = 0;
  std::int32_t last_fetched_epoch = -1;  // v12+ (KIP-595)
  std::int64_t log_start_offset = -1;    // v5+; only followers set it
  std::int32_t partition_max_bytes = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchPartition&) const = default;
  static constexpr auto fields() {
    using S = FetchPartition;
    return std::tuple{
        field("partition", &S::partition, kAll),
        field("current_leader_epoch", &S::current_leader_epoch, since(9)),
        field("fetch_offset", &S::fetch_offset, kAll),
        field("last_fetched_epoch", &S::last_fetched_epoch, since(12)),
        field("log_start_offset", &S::log_start_offset, since(5)),
        field("partition_max_bytes", &S::partition_max_bytes, kAll),
    };
  }
};

struct FetchTopic {
  std::string topic;  // v0-12; v13+ names topics by id
  std::vector<FetchPartition> partitions;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchTopic&) const = default;
  static constexpr auto fields() {
    using S = FetchTopic;
    return std::tuple{
        field("topic", &S::topic, between(0, 12)),
        field("partitions", &S::partitions, kAll),
    };
  }
};

// Partitions an incremental fetch drops from its session (KIP-227).
struct FetchForgottenTopic {
  std::string topic;  // v7-12
  std::vector<std::int32_t> partitions;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchForgottenTopic&) const = default;
  static constexpr auto fields() {
    using S = FetchForgottenTopic;
    return std::tuple{
        field("topic", &S::topic, between(7, 12)),
        field("partitions", &S::partitions, since(7)),
    };
  }
};

struct FetchRequest {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  static constexpr Versions kVersions{4, 12};
  static constexpr std::int16_t kFlexibleSince = 12;

  std::optional<std::string> cluster_id;  // v12+, tag 0 (KIP-595), absent when null
  std::int32_t replica_id = -1;           // v0-14; -1 for a consumer
  std::int32_t max_wait_ms = 0;
  std::int32_t min_bytes = 0;
  std::int32_t max_bytes = 0x7fffffff;  // v3+ (KIP-74)
  std::int8_t isolation_level = 0;      // v4+: 0 read_uncommitted, 1 read_committed (KIP-98)
  std::int32_t session_id = 0;          // v7+ (KIP-227)
  std::int32_t session_epoch = -1;      // v7+
  std::vector<FetchTopic> topics;
  std::vector<FetchForgottenTopic> forgotten_topics_data;  // v7+
  std::string rack_id;                                     // v11+ (KIP-392)
  RawTaggedFields unknown_tags;

  bool operator==(const FetchRequest&) const = default;
  static constexpr auto fields() {
    using S = FetchRequest;
    return std::tuple{
        field("cluster_id", &S::cluster_id, since(12)).nullable_in(since(12)).tagged_as(0, since(12)),
        field("replica_id", &S::replica_id, between(0, 14)),
        field("max_wait_ms", &S::max_wait_ms, kAll),
        field("min_bytes", &S::min_bytes, kAll),
        field("max_bytes", &S::max_bytes, since(3)),
        field("isolation_level", &S::isolation_level, since(4)),
        field("session_id", &S::session_id, since(7)),
        field("session_epoch", &S::session_epoch, since(7)),
        field("topics", &S::topics, kAll),
        field("forgotten_topics_data", &S::forgotten_topics_data, since(7)),
        field("rack_id", &S::rack_id, since(11)),
    };
  }
};

// Where a follower's log diverges from the leader's (KIP-595).
struct FetchEpochEndOffset {
  std::int32_t epoch = -1;
  std::int64_t end_offset = -1;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchEpochEndOffset&) const = default;
  static constexpr auto fields() {
    using S = FetchEpochEndOffset;
    return std::tuple{
        field("epoch", &S::epoch, since(12)),
        field("end_offset", &S::end_offset, since(12)),
    };
  }
};

struct FetchLeaderIdAndEpoch {
  std::int32_t leader_id = -1;
  std::int32_t leader_epoch = -1;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchLeaderIdAndEpoch&) const = default;
  static constexpr auto fields() {
    using S = FetchLeaderIdAndEpoch;
    return std::tuple{
        field("leader_id", &S::leader_id, since(12)),
        field("leader_epoch", &S::leader_epoch, since(12)),
    };
  }
};

// The snapshot to fetch instead when fetch_offset is below the log start
// (KIP-630). Note the order: end_offset first, unlike FetchEpochEndOffset.
struct FetchSnapshotId {
  std::int64_t end_offset = -1;
  std::int32_t epoch = -1;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchSnapshotId&) const = default;
  static constexpr auto fields() {
    using S = FetchSnapshotId;
    return std::tuple{
        field("end_offset", &S::end_offset, kAll),
        field("epoch", &S::epoch, kAll),
    };
  }
};

struct FetchAbortedTransaction {
  ProducerId producer_id;
  std::int64_t first_offset = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchAbortedTransaction&) const = default;
  static constexpr auto fields() {
    using S = FetchAbortedTransaction;
    return std::tuple{
        field("producer_id", &S::producer_id, since(4)),
        field("first_offset", &S::first_offset, since(4)),
    };
  }
};

struct FetchPartitionData {
  std::int32_t partition_index = 0;
  ErrorCode error_code = ErrorCode::kNone;
  std::int64_t high_watermark = 0;
  std::int64_t last_stable_offset = -1;  // v4+ (KIP-98)
  std::int64_t log_start_offset = -1;    // v5+ (KIP-107)
  FetchEpochEndOffset diverging_epoch;   // v12+, tag 0
  FetchLeaderIdAndEpoch current_leader;  // v12+, tag 1
  FetchSnapshotId snapshot_id;           // v12+, tag 2
  // v4+, nullable. Kafka gives no JSON default, so its generated default (an
  // empty list, not null) is kept.
  std::optional<std::vector<FetchAbortedTransaction>> aborted_transactions = std::vector<FetchAbortedTransaction>{};
  std::int32_t preferred_read_replica = -1;  // v11+ (KIP-392)
  RecordsView records;                       // nullable in every version
  RawTaggedFields unknown_tags;

  bool operator==(const FetchPartitionData&) const = default;
  static constexpr auto fields() {
    using S = FetchPartitionData;
    return std::tuple{
        field("partition_index", &S::partition_index, kAll),
        field("error_code", &S::error_code, kAll),
        field("high_watermark", &S::high_watermark, kAll),
        field("last_stable_offset", &S::last_stable_offset, since(4)),
        field("log_start_offset", &S::log_start_offset, since(5)),
        field("diverging_epoch", &S::diverging_epoch, since(12)).tagged_as(0, since(12)),
        field("current_leader", &S::current_leader, since(12)).tagged_as(1, since(12)),
        field("snapshot_id", &S::snapshot_id, since(12)).tagged_as(2, since(12)),
        field("aborted_transactions", &S::aborted_transactions, since(4)).nullable_in(since(4)),
        field("preferred_read_replica", &S::preferred_read_replica, since(11)),
        field("records", &S::records, kAll).nullable_in(kAll),
    };
  }
};

struct FetchableTopicResponse {
  std::string topic;  // v0-12
  std::vector<FetchPartitionData> partitions;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchableTopicResponse&) const = default;
  static constexpr auto fields() {
    using S = FetchableTopicResponse;
    return std::tuple{
        field("topic", &S::topic, between(0, 12)),
        field("partitions", &S::partitions, kAll),
    };
  }
};

struct FetchResponse {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  static constexpr Versions kVersions{4, 12};
  static constexpr std::int16_t kFlexibleSince = 12;

  std::int32_t throttle_time_ms = 0;
  ErrorCode error_code = ErrorCode::kNone;  // v7+, whole-session errors (KIP-227)
  std::int32_t session_id = 0;              // v7+
  std::vector<FetchableTopicResponse> responses;
  RawTaggedFields unknown_tags;

  bool operator==(const FetchResponse&) const = default;
  static constexpr auto fields() {
    using S = FetchResponse;
    return std::tuple{
        field("throttle_time_ms", &S::throttle_time_ms, since(1)),
        field("error_code", &S::error_code, since(7)),
        field("session_id", &S::session_id, since(7)),
        field("responses", &S::responses, kAll),
    };
  }
};

}  // namespace pp
