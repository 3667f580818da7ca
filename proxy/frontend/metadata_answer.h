// Metadata (v0-v13) as the client sees it: the sidecar is the only broker and
// the leader of every partition; topics, partition counts and topic errors
// are the upstream's (TopicDirectory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proxy/frontend/topic_directory.h"
#include "proxy/protocol/messages/metadata.h"

namespace pp {

// The one broker a client sees. Node 0 is also the controller.
inline constexpr std::int32_t kProxyNodeId = 0;
// A fixed cluster id (Metadata v2+): clients only compare it across answers,
// and the sidecar is the same "cluster" for as long as it runs.
inline constexpr std::string_view kProxyClusterId = "produce-proxy";
// Leader epoch of every partition (Metadata v7+, KIP-320). The sidecar stays
// the leader whatever happens upstream, so the epoch never needs to move: a
// constant can't regress, and a client comparing epochs never discards an
// answer as stale. Upstream leader changes are the pipeline's business.
inline constexpr std::int32_t kProxyLeaderEpoch = 0;

struct AdvertisedBroker {
  std::string host;
  std::int32_t port = 0;
};

// What to ask the TopicDirectory for one request.
struct MetadataQuery {
  bool ask_directory = true;                       // false: v1+ empty topic list, brokers only
  std::optional<std::vector<std::string>> topics;  // nullopt: every topic
  bool allow_auto_topic_creation = true;           // v4+ as sent; earlier versions: true
};

// v0: an empty array means all topics. v1+: null means all, empty means none.
// Duplicate names are asked once; topics named only by id (v10+; the
// handler names those the directory knows first) are not asked.
MetadataQuery metadata_query(const MetadataRequest& request, std::int16_t version);

// Builds the answer. Requested topics come back in request order (each name
// once); a name the directory did not describe is UNKNOWN_TOPIC_OR_PARTITION,
// a topic still asked by id only is UNKNOWN_TOPIC_ID (an id the directory
// does not know). Topics carry the directory's ids (v10+). For "all topics",
// every description is listed.
MetadataResponse metadata_answer(const MetadataRequest& request, std::int16_t version, const AdvertisedBroker& broker,
                                 const std::vector<TopicDescription>& described);

}  // namespace pp
