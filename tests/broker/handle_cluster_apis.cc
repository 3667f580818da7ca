// The cluster-level APIs: ApiVersions, Metadata, InitProducerId.
#include <algorithm>

#include "tests/broker/handlers.h"
#include "tests/broker/log.h"

namespace pp::test_broker {

namespace {

// What a KIP-1269 broker of this cluster advertises. Produce starts at v3
// (RecordBatch v2 only, as Kafka 4 refuses older formats); the others are
// what the codec describes and the consumers in TOOLS.md use.
constexpr ServedApi kModernApis[] = {
    {ApiKey::kProduce, {3, 14}, ProduceRequest::kFlexibleSince},
    {ApiKey::kFetch, {4, 12}, FetchRequest::kFlexibleSince},
    {ApiKey::kListOffsets, {1, 7}, ListOffsetsRequest::kFlexibleSince},
    {ApiKey::kMetadata, {0, 12}, MetadataRequest::kFlexibleSince},
    {ApiKey::kApiVersions, {0, 3}, ApiVersionsRequest::kFlexibleSince},
    {ApiKey::kInitProducerId, {0, 5}, InitProducerIdRequest::kFlexibleSince},
};
constexpr ServedApi kLegacyApis[] = {
    {ApiKey::kProduce, {3, 13}, ProduceRequest::kFlexibleSince},
    {ApiKey::kFetch, {4, 12}, FetchRequest::kFlexibleSince},
    {ApiKey::kListOffsets, {1, 7}, ListOffsetsRequest::kFlexibleSince},
    {ApiKey::kMetadata, {0, 12}, MetadataRequest::kFlexibleSince},
    {ApiKey::kApiVersions, {0, 3}, ApiVersionsRequest::kFlexibleSince},
    {ApiKey::kInitProducerId, {0, 5}, InitProducerIdRequest::kFlexibleSince},
};

MetadataResponseTopic describe_topic(ClusterState& cluster, Topic& t) {
  MetadataResponseTopic out;
  out.name = t.name;
  out.topic_id = t.id;
  std::vector<std::int32_t> all, up, down;
  for (const auto& b : cluster.brokers()) {
    all.push_back(b.id);
    (b.up ? up : down).push_back(b.id);
  }
  for (const auto& p : t.partitions) {
    MetadataResponsePartition mp;
    mp.partition_index = p->index;
    mp.leader_id = p->leader;
    mp.leader_epoch = p->leader_epoch;
    mp.error_code = p->leader < 0 ? ErrorCode::kLeaderNotAvailable : ErrorCode::kNone;
    // Every broker replicates every partition; the ones up are in sync.
    mp.replica_nodes = all;
    mp.isr_nodes = up;
    mp.offline_replicas = down;
    out.partitions.push_back(std::move(mp));
  }
  return out;
}

}  // namespace

std::span<const ServedApi> served_apis(bool legacy) {
  if (legacy) return kLegacyApis;
  return kModernApis;
}

const ServedApi* find_served_api(bool legacy, ApiKey key) {
  for (const auto& api : served_apis(legacy)) {
    if (api.key == key) return &api;
  }
  return nullptr;
}

ApiVersionsResponse handle_api_versions(const ClusterState& cluster, BrokerId self, ErrorCode error) {
  const BrokerInfo* me = cluster.broker(self);
  ApiVersionsResponse out;
  out.error_code = error;
  for (const auto& api : served_apis(me && me->legacy)) {
    out.api_keys.push_back(ApiVersionRange{static_cast<std::int16_t>(api.key), api.versions.min, api.versions.max, {}});
  }
  return out;
}

MetadataResponse handle_metadata(ClusterState& cluster, BrokerId, const MetadataRequest& request,
                                 std::int16_t version) {
  MetadataResponse out;
  for (const auto& b : cluster.brokers()) {
    if (b.up) out.brokers.push_back(MetadataResponseBroker{b.id, b.host, b.port, std::nullopt, {}});
  }
  out.cluster_id = "pp-test-cluster-" + std::to_string(cluster.seed());
  out.controller_id = cluster.controller();

  // v0: an empty list means all topics; v1+: null means all, empty none.
  const bool all = !request.topics || (version == 0 && request.topics->empty());
  if (all) {
    for (const auto& t : cluster.topics()) out.topics.push_back(describe_topic(cluster, *t));
    return out;
  }
  for (const auto& want : *request.topics) {
    // v12 may name a topic by id alone (KIP-516).
    Topic* t = want.name ? cluster.topic(*want.name) : (version >= 12 ? cluster.topic(want.topic_id) : nullptr);
    if (t) {
      out.topics.push_back(describe_topic(cluster, *t));
      continue;
    }
    // Auto-creation is off (allow_auto_topic_creation is ignored).
    MetadataResponseTopic unknown;
    unknown.name = want.name;
    if (want.name) {
      unknown.error_code = ErrorCode::kUnknownTopicOrPartition;
    } else {
      unknown.error_code = ErrorCode::kUnknownTopicId;
      unknown.topic_id = want.topic_id;
    }
    out.topics.push_back(std::move(unknown));
  }
  return out;
}

InitProducerIdResponse handle_init_producer_id(ClusterState& cluster, const InitProducerIdRequest& request,
                                               std::int16_t version) {
  InitProducerIdResponse out;
  if (request.transactional_id) {
    // Only idempotent producers: a transactional id would need a transaction
    // coordinator. Kafka answers an empty id with INVALID_REQUEST too.
    log().warn("InitProducerId with transactional_id '{}': transactions are not supported", *request.transactional_id);
    out.error_code = ErrorCode::kInvalidRequest;
    out.producer_id = kNoProducerId;
    out.producer_epoch = pp::kNoProducerEpoch;
    return out;
  }
  const auto grant = cluster.init_producer_id(request.producer_id.value, request.producer_epoch.value, version);
  out.error_code = grant.error;
  out.producer_id = ProducerId{grant.producer_id};
  out.producer_epoch = ProducerEpoch{grant.producer_epoch};
  log().debug("InitProducerId v{} (id {}, epoch {}): {} -> id {} epoch {}", version, request.producer_id.value,
              request.producer_epoch.value, error_name(grant.error), grant.producer_id, grant.producer_epoch);
  return out;
}

}  // namespace pp::test_broker
