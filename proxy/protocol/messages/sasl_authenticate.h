// SaslAuthenticate (API key 36), v0-v2 (KIP-152). Field facts from Kafka's
// SaslAuthenticateRequest.json and SaslAuthenticateResponse.json.
//
// Carries the SASL tokens in Kafka frames after a v1 SaslHandshake. v1 adds
// session_lifetime_ms for re-authentication (KIP-368), v2 is flexible (KIP-482).
#pragma once

#include <optional>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct SaslAuthenticateRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSaslAuthenticate;
  static constexpr Versions kVersions{0, 2};
  static constexpr std::int16_t kFlexibleSince = 2;

  Bytes auth_bytes;  // opaque to Kafka: defined by the SASL mechanism
  RawTaggedFields unknown_tags;

  bool operator==(const SaslAuthenticateRequest&) const = default;
  static constexpr auto fields() {
    using S = SaslAuthenticateRequest;
    return std::tuple{
        field("auth_bytes", &S::auth_bytes, kAll),
    };
  }
};

struct SaslAuthenticateResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSaslAuthenticate;
  static constexpr Versions kVersions{0, 2};
  static constexpr std::int16_t kFlexibleSince = 2;

  ErrorCode error_code = ErrorCode::kNone;
  // Null when there is no error. Kafka's JSON gives no default, so the
  // generated one, "", is kept.
  std::optional<std::string> error_message = std::string();
  Bytes auth_bytes;
  std::int64_t session_lifetime_ms = 0;  // v1+ (KIP-368); 0 = no re-authentication
  RawTaggedFields unknown_tags;

  bool operator==(const SaslAuthenticateResponse&) const = default;
  static constexpr auto fields() {
    using S = SaslAuthenticateResponse;
    return std::tuple{
        field("error_code", &S::error_code, kAll),
        field("error_message", &S::error_message, kAll).nullable_in(kAll),
        field("auth_bytes", &S::auth_bytes, kAll),
        field("session_lifetime_ms", &S::session_lifetime_ms, since(1)),
    };
  }
};

}  // namespace pp
