#include "proxy/frontend/api_versions_answer.h"

#include <algorithm>

#include "proxy/protocol/api_registry.h"
#include "proxy/protocol/codec.h"

namespace pp {
namespace {

// What the front end's handlers take, before intersecting with the codec.
std::optional<Versions> handled_versions(ApiKey key) {
  switch (key) {
    case ApiKey::kProduce:
      return Versions{0, kFrontendMaxProduceVersion};
    case ApiKey::kMetadata:
    case ApiKey::kApiVersions:
    case ApiKey::kInitProducerId:  // idempotent clients only: ids from ClientProducers
    case ApiKey::kSaslHandshake:   // client SASL (sasl_handler.h); outside it ILLEGAL_SASL_STATE
    case ApiKey::kSaslAuthenticate:
      return Versions{0, kMaxVersion};
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Versions> served_versions(ApiKey key) {
  const auto handled = handled_versions(key);
  const ApiSpec* spec = find_api(key);
  if (!handled || !spec) return std::nullopt;
  const Versions v{std::max(handled->min, spec->versions.min), std::min(handled->max, spec->versions.max)};
  if (v.empty()) return std::nullopt;
  return v;
}

std::vector<ApiVersionRange> advertised_api_ranges(bool offer_topic_ids) {
  std::vector<ApiVersionRange> out;
  auto add = [&out](ApiKey key, Versions v) {
    ApiVersionRange& r = out.emplace_back();
    r.api_key = static_cast<std::int16_t>(key);
    r.min_version = v.min;
    r.max_version = v.max;
  };
  for (const ApiSpec& spec : described_apis()) {
    auto v = served_versions(spec.key);
    if (!v) continue;
    if (spec.key == ApiKey::kProduce && !offer_topic_ids) {
      v->max = std::min(v->max, kFrontendMaxProduceVersionByName);
    }
    add(spec.key, *v);
  }
  // Listed for librdkafka's feature detection only (see the header).
  if (const ApiSpec* fetch = find_api(ApiKey::kFetch)) {
    add(ApiKey::kFetch, Versions{std::max<std::int16_t>(fetch->versions.min, 4), fetch->versions.max});
  }
  add(ApiKey::kFindCoordinator, Versions{0, 0});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.api_key < b.api_key; });
  return out;
}

Bytes answer_api_versions(std::int32_t correlation_id, std::int16_t request_version, bool offer_topic_ids) {
  ApiVersionsResponse response;
  response.api_keys = advertised_api_ranges(offer_topic_ids);
  const auto served = served_versions(ApiKey::kApiVersions);
  if (!served || !served->contains(request_version)) {
    response.error_code = ErrorCode::kUnsupportedVersion;
    return encode_response_frame(correlation_id, 0, response);
  }
  return encode_response_frame(correlation_id, request_version, response);
}

}  // namespace pp
