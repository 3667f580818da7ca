// DescribeConfigs (API key 32), v1-v4. Field facts from Kafka's
// DescribeConfigsRequest.json and DescribeConfigsResponse.json.
//
// The proxy asks it upstream for one thing: each topic's max.message.bytes,
// the largest record batch the topic's log accepts (after compression, with
// the 12-byte log overhead), so that a record no batch could carry is refused
// at the front end and upstream batches are cut to fit.
//
// v1 adds the config source and synonyms, v3 the type and documentation, v4
// is the first flexible version. Not described: v0 (an is_default bool where
// v1 has config_source; Kafka 4.0 removed it, KIP-896).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

// org.apache.kafka.common.config.ConfigResource.Type
inline constexpr std::int8_t kConfigResourceTopic = 2;
inline constexpr std::int8_t kConfigResourceBroker = 4;

struct DescribeConfigsResource {
  std::int8_t resource_type = 0;
  std::string resource_name;
  // Null: every key of the resource.
  std::optional<std::vector<std::string>> configuration_keys;
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsResource&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsResource;
    return std::tuple{
        field("resource_type", &S::resource_type, kAll),
        field("resource_name", &S::resource_name, kAll),
        field("configuration_keys", &S::configuration_keys, kAll).nullable_in(kAll),
    };
  }
};

struct DescribeConfigsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  static constexpr Versions kVersions{1, 4};
  static constexpr std::int16_t kFlexibleSince = 4;

  std::vector<DescribeConfigsResource> resources;
  bool include_synonyms = false;       // v1+
  bool include_documentation = false;  // v3+
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsRequest&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsRequest;
    return std::tuple{
        field("resources", &S::resources, kAll),
        field("include_synonyms", &S::include_synonyms, since(1)),
        field("include_documentation", &S::include_documentation, since(3)),
    };
  }
};

struct DescribeConfigsSynonym {
  std::string name;
  std::optional<std::string> value;
  std::int8_t source = 0;
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsSynonym&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsSynonym;
    return std::tuple{
        field("name", &S::name, kAll),
        field("value", &S::value, kAll).nullable_in(kAll),
        field("source", &S::source, kAll),
    };
  }
};

struct DescribeConfigsEntry {
  std::string name;
  std::optional<std::string> value;  // null for a sensitive one
  bool read_only = false;
  std::int8_t config_source = -1;  // v1+
  bool is_sensitive = false;
  std::vector<DescribeConfigsSynonym> synonyms;  // v1+
  std::int8_t config_type = 0;                   // v3+
  std::optional<std::string> documentation;      // v3+
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsEntry&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsEntry;
    return std::tuple{
        field("name", &S::name, kAll),
        field("value", &S::value, kAll).nullable_in(kAll),
        field("read_only", &S::read_only, kAll),
        field("config_source", &S::config_source, since(1)),
        field("is_sensitive", &S::is_sensitive, kAll),
        field("synonyms", &S::synonyms, since(1)),
        field("config_type", &S::config_type, since(3)),
        field("documentation", &S::documentation, since(3)).nullable_in(kAll),
    };
  }
};

struct DescribeConfigsResult {
  ErrorCode error_code = ErrorCode::kNone;
  std::optional<std::string> error_message;
  std::int8_t resource_type = 0;
  std::string resource_name;
  std::vector<DescribeConfigsEntry> configs;
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsResult&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsResult;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("error_message", &S::error_message, kAll).nullable_in(kAll),
        field("resource_type", &S::resource_type, kAll),
        field("resource_name", &S::resource_name, kAll),
        field("configs", &S::configs, kAll),
    };
  }
};

struct DescribeConfigsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  static constexpr Versions kVersions{1, 4};
  static constexpr std::int16_t kFlexibleSince = 4;

  std::int32_t throttle_time_ms = 0;
  std::vector<DescribeConfigsResult> results;
  RawTaggedFields unknown_tags;

  bool operator==(const DescribeConfigsResponse&) const = default;
  static constexpr auto fields() {
    using S = DescribeConfigsResponse;
    return std::tuple{
        field("throttle_time_ms", &S::throttle_time_ms, kAll),
        field("results", &S::results, kAll),
    };
  }
};

}  // namespace pp
