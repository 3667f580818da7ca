// SaslHandshake (API key 17), v0-v1. Field facts from Kafka's
// SaslHandshakeRequest.json and SaslHandshakeResponse.json.
//
// After a v0 handshake the SASL tokens follow as bare size-prefixed blobs with
// no Kafka header (KIP-43); after v1 they travel in SaslAuthenticate (KIP-152).
// Never flexible: the version cannot be bumped because clients up to 2.4
// negotiated it wrongly (KAFKA-9577).
#pragma once

#include <string>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

// flexibleVersions "none". schema.h has no "never" value for kFlexibleSince;
// the largest version stands in for it.
inline constexpr std::int16_t kSaslHandshakeNeverFlexible = kMaxVersion;

struct SaslHandshakeRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSaslHandshake;
  static constexpr Versions kVersions{0, 1};
  static constexpr std::int16_t kFlexibleSince = kSaslHandshakeNeverFlexible;

  std::string mechanism;  // "PLAIN", "SCRAM-SHA-256", ...
  RawTaggedFields unknown_tags;

  bool operator==(const SaslHandshakeRequest&) const = default;
  static constexpr auto fields() {
    using S = SaslHandshakeRequest;
    return std::tuple{
        field("mechanism", &S::mechanism, kAll),
    };
  }
};

struct SaslHandshakeResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSaslHandshake;
  static constexpr Versions kVersions{0, 1};
  static constexpr std::int16_t kFlexibleSince = kSaslHandshakeNeverFlexible;

  ErrorCode error_code = ErrorCode::kNone;  // UNSUPPORTED_SASL_MECHANISM, ...
  std::vector<std::string> mechanisms;      // what the broker has enabled
  RawTaggedFields unknown_tags;

  bool operator==(const SaslHandshakeResponse&) const = default;
  static constexpr auto fields() {
    using S = SaslHandshakeResponse;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("mechanisms", &S::mechanisms, kAll),
    };
  }
};

}  // namespace pp
