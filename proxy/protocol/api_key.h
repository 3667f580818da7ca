// Kafka API keys the proxy speaks or may see (org.apache.kafka.common.protocol.ApiKeys).
#pragma once

#include <cstdint>
#include <string_view>

namespace pp {

enum class ApiKey : std::int16_t {
  kProduce = 0,
  kFetch = 1,
  kListOffsets = 2,
  kMetadata = 3,
  kOffsetCommit = 8,
  kOffsetFetch = 9,
  kFindCoordinator = 10,
  kJoinGroup = 11,
  kHeartbeat = 12,
  kLeaveGroup = 13,
  kSyncGroup = 14,
  kDescribeGroups = 15,
  kListGroups = 16,
  kSaslHandshake = 17,
  kApiVersions = 18,
  kCreateTopics = 19,
  kDeleteTopics = 20,
  kDeleteRecords = 21,
  kInitProducerId = 22,
  kAddPartitionsToTxn = 24,
  kEndTxn = 26,
  kDescribeConfigs = 32,
  kSaslAuthenticate = 36,
};

// Kafka's own name for the API ("Produce", "ApiVersions"); "Unknown" otherwise.
std::string_view api_name(ApiKey key);

}  // namespace pp
