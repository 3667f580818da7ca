#include "proxy/protocol/header.h"

#include "proxy/protocol/api_registry.h"

namespace pp {

std::optional<bool> is_flexible(ApiKey key, std::int16_t version) {
  const ApiSpec* spec = find_api(key);
  if (!spec) return std::nullopt;
  return version >= spec->flexible_since;
}

std::int16_t request_header_version(ApiKey key, std::int16_t version) {
  return is_flexible(key, version).value_or(false) ? 2 : 1;
}

std::int16_t response_header_version(ApiKey key, std::int16_t version) {
  if (key == ApiKey::kApiVersions) return 0;
  return is_flexible(key, version).value_or(false) ? 1 : 0;
}

namespace {

// The tagged-field section of a header: a struct with no fields of its own.
struct HeaderTags {
  RawTaggedFields unknown_tags;
  static constexpr auto fields() { return std::tuple{}; }
};

}  // namespace

void encode_request_header(WireWriter& w, const RequestHeader& h) {
  w.int16(static_cast<std::int16_t>(h.api_key));
  w.int16(h.api_version);
  w.int32(h.correlation_id);
  // client_id keeps the classic nullable-string encoding in every header version.
  encode_value(w, h.client_id, true, SchemaContext{h.api_version, false});
  if (request_header_version(h.api_key, h.api_version) >= 2) {
    HeaderTags tags{h.unknown_tags};
    encode_struct(w, tags, SchemaContext{h.api_version, true});
  }
}

Decoded<DecodedRequestHeader> decode_request_header(WireReader& r) {
  DecodedRequestHeader out;
  auto key = r.read_int16();
  if (!key) return std::unexpected(key.error().within("api_key"));
  auto version = r.read_int16();
  if (!version) return std::unexpected(version.error().within("api_version"));
  auto correlation = r.read_int32();
  if (!correlation) return std::unexpected(correlation.error().within("correlation_id"));
  out.header.api_key = static_cast<ApiKey>(*key);
  out.header.api_version = *version;
  out.header.correlation_id = *correlation;
  auto client = decode_value(r, out.header.client_id, true, SchemaContext{*version, false});
  if (!client) return std::unexpected(client.error().within("client_id"));
  auto flexible = is_flexible(out.header.api_key, *version);
  out.flexible_known = flexible.has_value();
  if (flexible.value_or(false)) {
    HeaderTags tags;
    auto res = decode_struct(r, tags, SchemaContext{*version, true});
    if (!res) return std::unexpected(res.error().within("header"));
    out.header.unknown_tags = std::move(tags.unknown_tags);
  }
  return out;
}

void encode_response_header(WireWriter& w, std::int32_t correlation_id, ApiKey key, std::int16_t version) {
  w.int32(correlation_id);
  if (response_header_version(key, version) >= 1) w.uvarint(0);
}

Decoded<std::int32_t> decode_response_header(WireReader& r, ApiKey key, std::int16_t version) {
  auto correlation = r.read_int32();
  if (!correlation) return std::unexpected(correlation.error().within("correlation_id"));
  if (response_header_version(key, version) >= 1) {
    HeaderTags tags;
    auto res = decode_struct(r, tags, SchemaContext{version, true});
    if (!res) return std::unexpected(res.error().within("header"));
  }
  return *correlation;
}

}  // namespace pp
