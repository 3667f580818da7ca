// ApiVersions (KIP-35, KIP-511): what the front end answers with. The table
// is the registry's described ranges (api_registry.h) intersected with what
// the front end serves, so ApiVersions can never advertise a version the
// handlers can't decode.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/protocol/api_key.h"
#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/protocol/schema.h"

namespace pp {

// The highest Produce version the front end serves. v13 names topics by id
// (KIP-516), which it maps to the upstream's names (TopicDirectory::
// topic_name); v9-v12 requests differ from v9 only in what the broker may
// answer. v14 (KIP-1269) is between the proxy and its upstream only.
inline constexpr std::int16_t kFrontendMaxProduceVersion = kProduceTopicIdVersion;
// The highest Produce version ApiVersions lists while the upstream offers no
// topic ids (TopicDirectory::offers_topic_ids): clients keep naming topics.
inline constexpr std::int16_t kFrontendMaxProduceVersionByName = kProduceTopicIdVersion - 1;

// The versions the front end serves for `key`, or nullopt when it serves none
// (every other API gets the protocol's error answer or a close).
// Produce starts at v0 even though Kafka 4 no longer takes it: older
// librdkafka turns compression off unless Produce v0 is listed (KAFKA-18659),
// and v0-2 clients are who the proxy is for.
std::optional<Versions> served_versions(ApiKey key);

// Ordered by api key, for the ApiVersions answer: what we serve, plus two
// APIs listed only so clients turn features on. librdkafka decides what it
// may send from the broker's ApiVersions (rdkafka_feature.c): magic 2 needs
// Fetch v4 listed, zstd Fetch v10, and LZ4 FindCoordinator v0. Without them
// a default kcat falls back to magic 0 in Produce v7 and drops headers,
// zstd and lz4. A client that does send Fetch gets the protocol's error
// answer (v7+) or a close with a log line; FindCoordinator closes.
// Produce is listed up to kFrontendMaxProduceVersion with
// `offer_topic_ids`, else up to kFrontendMaxProduceVersionByName; a v13
// request is served either way.
std::vector<ApiVersionRange> advertised_api_ranges(bool offer_topic_ids);

// The whole response frame for an ApiVersions request (advertised_api_ranges).
// A version outside our
// range gets UNSUPPORTED_VERSION in the v0 layout with our ranges, so the
// client can retry at a version we list (KIP-511; Kafka's
// ApiVersionsRequest.getErrorResponse).
Bytes answer_api_versions(std::int32_t correlation_id, std::int16_t request_version, bool offer_topic_ids);

}  // namespace pp
