// Request and response headers (Kafka protocol guide; KIP-482 for v2/v1).
// Request header v1: api_key, api_version, correlation_id, client_id (classic
// nullable string even in v2); v2 adds tagged fields. Response header v0:
// correlation_id; v1 adds tagged fields. Flexible API versions use request v2
// and response v1, except ApiVersions, whose response header is always v0 so a
// client can parse it before it knows what the broker speaks.
#pragma once

#include <optional>
#include <string>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct RequestHeader {
  ApiKey api_key = ApiKey::kProduce;
  std::int16_t api_version = 0;
  std::int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  RawTaggedFields unknown_tags;

  bool operator==(const RequestHeader&) const = default;
};

// Whether (api, version) is flexible, for APIs in the registry; nullopt for an
// API we don't describe (its header version then can't be known).
std::optional<bool> is_flexible(ApiKey key, std::int16_t version);

std::int16_t request_header_version(ApiKey key, std::int16_t version);
std::int16_t response_header_version(ApiKey key, std::int16_t version);

void encode_request_header(WireWriter& w, const RequestHeader& h);

// Decodes the header at the start of a request frame. For an API we don't
// describe, only the fixed v1 part is read and `flexible_known` is false, so the
// caller can still answer or log by correlation id.
struct DecodedRequestHeader {
  RequestHeader header;
  bool flexible_known = true;
};
Decoded<DecodedRequestHeader> decode_request_header(WireReader& r);

void encode_response_header(WireWriter& w, std::int32_t correlation_id, ApiKey key, std::int16_t version);
// Returns the correlation id; skips (and drops) header tags.
Decoded<std::int32_t> decode_response_header(WireReader& r, ApiKey key, std::int16_t version);

}  // namespace pp
