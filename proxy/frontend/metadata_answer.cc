#include "proxy/frontend/metadata_answer.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace pp {
namespace {

bool asks_all(const MetadataRequest& request, std::int16_t version) {
  if (!request.topics) return true;
  return version == 0 && request.topics->empty();
}

MetadataResponseTopic topic_entry(const TopicDescription& d) {
  MetadataResponseTopic t;
  t.error_code = d.error;
  t.name = d.name;
  t.topic_id = d.topic_id;
  t.is_internal = d.is_internal;
  if (d.error != ErrorCode::kNone) return t;  // Kafka lists no partitions with a topic error
  t.partitions.reserve(static_cast<std::size_t>(std::max(0, d.partition_count)));
  for (std::int32_t i = 0; i < d.partition_count; ++i) {
    MetadataResponsePartition& p = t.partitions.emplace_back();
    p.error_code = ErrorCode::kNone;
    p.partition_index = i;
    p.leader_id = kProxyNodeId;
    p.leader_epoch = kProxyLeaderEpoch;
    p.replica_nodes = {kProxyNodeId};
    p.isr_nodes = {kProxyNodeId};
  }
  return t;
}

}  // namespace

MetadataQuery metadata_query(const MetadataRequest& request, std::int16_t version) {
  MetadataQuery q;
  q.allow_auto_topic_creation = version >= 4 ? request.allow_auto_topic_creation : true;
  if (asks_all(request, version)) {
    q.topics = std::nullopt;
    return q;
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const MetadataRequestTopic& t : *request.topics) {
    if (!t.name) continue;
    if (seen.insert(*t.name).second) names.push_back(*t.name);
  }
  q.ask_directory = !names.empty();
  q.topics = std::move(names);
  return q;
}

MetadataResponse metadata_answer(const MetadataRequest& request, std::int16_t version, const AdvertisedBroker& broker,
                                 const std::vector<TopicDescription>& described) {
  MetadataResponse response;
  MetadataResponseBroker& b = response.brokers.emplace_back();
  b.node_id = kProxyNodeId;
  b.host = broker.host;
  b.port = broker.port;
  response.cluster_id = std::string(kProxyClusterId);
  response.controller_id = kProxyNodeId;

  if (asks_all(request, version)) {
    response.topics.reserve(described.size());
    for (const TopicDescription& d : described) response.topics.push_back(topic_entry(d));
    return response;
  }
  std::unordered_map<std::string, const TopicDescription*> by_name;
  for (const TopicDescription& d : described) by_name.emplace(d.name, &d);
  std::set<std::string> listed;
  for (const MetadataRequestTopic& t : *request.topics) {
    if (!t.name) {
      // v10+: asked by an id the directory does not know (the handler named
      // the known ones).
      MetadataResponseTopic& out = response.topics.emplace_back();
      out.error_code = ErrorCode::kUnknownTopicId;
      out.name = std::nullopt;
      out.topic_id = t.topic_id;
      continue;
    }
    if (!listed.insert(*t.name).second) continue;
    auto it = by_name.find(*t.name);
    if (it != by_name.end()) {
      response.topics.push_back(topic_entry(*it->second));
    } else {
      MetadataResponseTopic& out = response.topics.emplace_back();
      out.error_code = ErrorCode::kUnknownTopicOrPartition;
      out.name = *t.name;
    }
  }
  return response;
}

}  // namespace pp
