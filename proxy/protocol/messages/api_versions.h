// ApiVersions (API key 18), v0-v5 (KIP-35, KIP-511 flexible v3, KIP-584 features;
// v5, Kafka 4.4, adds the ClusterId and NodeId the client expects to the request,
// null and -1 on a bootstrap connection; the v5 response is the v4 one).
// Its response header is always v0, even in flexible versions (header.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct ApiVersionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  static constexpr Versions kVersions{0, 5};
  static constexpr std::int16_t kFlexibleSince = 3;

  std::string client_software_name;       // v3+
  std::string client_software_version;    // v3+
  std::optional<std::string> cluster_id;  // v5+, null when not known yet
  std::int32_t node_id = -1;              // v5+, -1 when not known yet
  RawTaggedFields unknown_tags;

  bool operator==(const ApiVersionsRequest&) const = default;
  static constexpr auto fields() {
    using S = ApiVersionsRequest;
    return std::tuple{
        field("client_software_name", &S::client_software_name, since(3)),
        field("client_software_version", &S::client_software_version, since(3)),
        field("cluster_id", &S::cluster_id, since(5)).nullable_in(since(5)),
        field("node_id", &S::node_id, since(5)),
    };
  }
};

struct ApiVersionRange {
  std::int16_t api_key = 0;
  std::int16_t min_version = 0;
  std::int16_t max_version = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const ApiVersionRange&) const = default;
  static constexpr auto fields() {
    using S = ApiVersionRange;
    return std::tuple{
        field("api_key", &S::api_key, kAll),
        field("min_version", &S::min_version, kAll),
        field("max_version", &S::max_version, kAll),
    };
  }
};

struct SupportedFeatureKey {
  std::string name;
  std::int16_t min_version = 0;
  std::int16_t max_version = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const SupportedFeatureKey&) const = default;
  static constexpr auto fields() {
    using S = SupportedFeatureKey;
    return std::tuple{
        field("name", &S::name, since(3)),
        field("min_version", &S::min_version, since(3)),
        field("max_version", &S::max_version, since(3)),
    };
  }
};

struct FinalizedFeatureKey {
  std::string name;
  std::int16_t max_version_level = 0;
  std::int16_t min_version_level = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const FinalizedFeatureKey&) const = default;
  static constexpr auto fields() {
    using S = FinalizedFeatureKey;
    return std::tuple{
        field("name", &S::name, since(3)),
        field("max_version_level", &S::max_version_level, since(3)),
        field("min_version_level", &S::min_version_level, since(3)),
    };
  }
};

struct ApiVersionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  static constexpr Versions kVersions{0, 5};
  static constexpr std::int16_t kFlexibleSince = 3;

  ErrorCode error_code = ErrorCode::kNone;
  std::vector<ApiVersionRange> api_keys;
  std::int32_t throttle_time_ms = 0;                    // v1+
  std::vector<SupportedFeatureKey> supported_features;  // v3+, tag 0
  std::int64_t finalized_features_epoch = -1;           // v3+, tag 1
  std::vector<FinalizedFeatureKey> finalized_features;  // v3+, tag 2
  bool zk_migration_ready = false;                      // v3+, tag 3
  RawTaggedFields unknown_tags;

  bool operator==(const ApiVersionsResponse&) const = default;
  static constexpr auto fields() {
    using S = ApiVersionsResponse;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("api_keys", &S::api_keys, kAll),
        field("throttle_time_ms", &S::throttle_time_ms, since(1)),
        field("supported_features", &S::supported_features, since(3)).tagged_as(0, since(3)),
        field("finalized_features_epoch", &S::finalized_features_epoch, since(3)).tagged_as(1, since(3)),
        field("finalized_features", &S::finalized_features, since(3)).tagged_as(2, since(3)),
        field("zk_migration_ready", &S::zk_migration_ready, since(3)).tagged_as(3, since(3)),
    };
  }
};

}  // namespace pp
