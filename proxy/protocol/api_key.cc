#include "proxy/protocol/api_key.h"

namespace pp {

std::string_view api_name(ApiKey key) {
  switch (key) {
    case ApiKey::kProduce:
      return "Produce";
    case ApiKey::kFetch:
      return "Fetch";
    case ApiKey::kListOffsets:
      return "ListOffsets";
    case ApiKey::kMetadata:
      return "Metadata";
    case ApiKey::kOffsetCommit:
      return "OffsetCommit";
    case ApiKey::kOffsetFetch:
      return "OffsetFetch";
    case ApiKey::kFindCoordinator:
      return "FindCoordinator";
    case ApiKey::kJoinGroup:
      return "JoinGroup";
    case ApiKey::kHeartbeat:
      return "Heartbeat";
    case ApiKey::kLeaveGroup:
      return "LeaveGroup";
    case ApiKey::kSyncGroup:
      return "SyncGroup";
    case ApiKey::kDescribeGroups:
      return "DescribeGroups";
    case ApiKey::kListGroups:
      return "ListGroups";
    case ApiKey::kSaslHandshake:
      return "SaslHandshake";
    case ApiKey::kApiVersions:
      return "ApiVersions";
    case ApiKey::kCreateTopics:
      return "CreateTopics";
    case ApiKey::kDeleteTopics:
      return "DeleteTopics";
    case ApiKey::kDeleteRecords:
      return "DeleteRecords";
    case ApiKey::kInitProducerId:
      return "InitProducerId";
    case ApiKey::kAddPartitionsToTxn:
      return "AddPartitionsToTxn";
    case ApiKey::kEndTxn:
      return "EndTxn";
    case ApiKey::kDescribeConfigs:
      return "DescribeConfigs";
    case ApiKey::kSaslAuthenticate:
      return "SaslAuthenticate";
  }
  return "Unknown";
}

}  // namespace pp
