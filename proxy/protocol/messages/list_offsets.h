// ListOffsets (API key 2), v1-v7. Field facts from Kafka's
// ListOffsetsRequest.json and ListOffsetsResponse.json.
//
// v1 answers one offset per partition (v0's max_num_offsets / old_style_offsets
// are not described), v2 adds read_committed (KIP-98), v4 leader epochs for
// fencing (KIP-320), v5 may answer OFFSET_NOT_AVAILABLE, v6 is flexible
// (KIP-482), v7 accepts timestamp -3, "the offset of the largest timestamp"
// (KIP-734). Not described: v8 -4 local log start (KIP-405), v9 -5 last tiered
// offset (KIP-1005), v10 timeout_ms (KIP-1075).
#pragma once

#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

// Special values of ListOffsetsPartition::timestamp.
inline constexpr std::int64_t kListOffsetsLatest = -1;
inline constexpr std::int64_t kListOffsetsEarliest = -2;
inline constexpr std::int64_t kListOffsetsMaxTimestamp = -3;  // v7+ (KIP-734)

struct ListOffsetsPartition {
  std::int32_t partition_index = 0;
  std::int32_t current_leader_epoch = -1;  // v4+ (KIP-320)
  std::int64_t timestamp = 0;              // a time in ms, or one of the special values above
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsPartition&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsPartition;
    return std::tuple{
        field("partition_index", &S::partition_index, kAll),
        field("current_leader_epoch", &S::current_leader_epoch, since(4)),
        field("timestamp", &S::timestamp, kAll),
    };
  }
};

struct ListOffsetsTopic {
  std::string name;
  std::vector<ListOffsetsPartition> partitions;
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsTopic&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsTopic;
    return std::tuple{
        field("name", &S::name, kAll),
        field("partitions", &S::partitions, kAll),
    };
  }
};

struct ListOffsetsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  static constexpr Versions kVersions{1, 7};
  static constexpr std::int16_t kFlexibleSince = 6;

  // Consumers send -1; Kafka's JSON gives no default, so it is 0 here as there.
  std::int32_t replica_id = 0;
  std::int8_t isolation_level = 0;  // v2+ (KIP-98)
  std::vector<ListOffsetsTopic> topics;
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsRequest&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsRequest;
    return std::tuple{
        field("replica_id", &S::replica_id, kAll),
        field("isolation_level", &S::isolation_level, since(2)),
        field("topics", &S::topics, kAll),
    };
  }
};

struct ListOffsetsPartitionResponse {
  std::int32_t partition_index = 0;
  ErrorCode error_code = ErrorCode::kNone;
  std::int64_t timestamp = -1;     // v1+
  std::int64_t offset = -1;        // v1+
  std::int32_t leader_epoch = -1;  // v4+ (KIP-320)
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsPartitionResponse&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsPartitionResponse;
    return std::tuple{
        field("partition_index", &S::partition_index, kAll), field("error_code", &S::error_code, kAll),
        field("timestamp", &S::timestamp, since(1)),         field("offset", &S::offset, since(1)),
        field("leader_epoch", &S::leader_epoch, since(4)),
    };
  }
};

struct ListOffsetsTopicResponse {
  std::string name;
  std::vector<ListOffsetsPartitionResponse> partitions;
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsTopicResponse&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsTopicResponse;
    return std::tuple{
        field("name", &S::name, kAll),
        field("partitions", &S::partitions, kAll),
    };
  }
};

struct ListOffsetsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  static constexpr Versions kVersions{1, 7};
  static constexpr std::int16_t kFlexibleSince = 6;

  std::int32_t throttle_time_ms = 0;  // v2+
  std::vector<ListOffsetsTopicResponse> topics;
  RawTaggedFields unknown_tags;

  bool operator==(const ListOffsetsResponse&) const = default;
  static constexpr auto fields() {
    using S = ListOffsetsResponse;
    return std::tuple{
        field("throttle_time_ms", &S::throttle_time_ms, since(2)),
        field("topics", &S::topics, kAll),
    };
  }
};

}  // namespace pp
