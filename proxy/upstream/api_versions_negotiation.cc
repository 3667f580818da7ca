#include "proxy/upstream/api_versions_negotiation.h"

#include <algorithm>

#include "proxy/protocol/api_registry.h"
#include "proxy/protocol/schema.h"

namespace pp::upstream {

namespace {

// The APIs whose absence makes a broker useless to the upstream layer.
bool needed_upstream(ApiKey key) {
  return key == ApiKey::kProduce || key == ApiKey::kMetadata || key == ApiKey::kInitProducerId;
}

Decoded<ApiVersionsResponse> decode_exactly(ByteView body, std::int16_t version) {
  WireReader r(body);
  auto resp = decode_body<ApiVersionsResponse>(r, version);
  if (!resp) return resp;
  if (!r.empty()) return r.fail(DecodeErrorKind::kTrailingBytes);
  return resp;
}

}  // namespace

std::int16_t minimum_usable_version(ApiKey key) {
  if (key == ApiKey::kProduce) return 3;
  const ApiSpec* spec = find_api(key);
  return spec ? spec->versions.min : 0;
}

NegotiatedVersions NegotiatedVersions::negotiate(std::span<const ApiVersionRange> broker_ranges) {
  NegotiatedVersions out;
  for (const ApiSpec& ours : described_apis()) {
    const auto key = static_cast<std::int16_t>(ours.key);
    if (key < 0 || static_cast<std::size_t>(key) >= out.versions_.size()) continue;
    const auto theirs = std::find_if(broker_ranges.begin(), broker_ranges.end(),
                                     [&](const ApiVersionRange& r) { return r.api_key == key; });
    const std::int16_t our_min = std::max(ours.versions.min, minimum_usable_version(ours.key));
    if (theirs == broker_ranges.end()) {
      if (needed_upstream(ours.key)) {
        out.unusable_.push_back(std::string(api_name(ours.key)) + ": not offered by the broker");
      }
      continue;
    }
    const std::int16_t hi = std::min(ours.versions.max, theirs->max_version);
    const std::int16_t lo = std::max(our_min, theirs->min_version);
    if (hi < lo) {
      if (needed_upstream(ours.key)) {
        out.unusable_.push_back(std::string(api_name(ours.key)) + ": broker speaks v" +
                                std::to_string(theirs->min_version) + "-v" + std::to_string(theirs->max_version) +
                                ", we need v" + std::to_string(our_min) + "-v" + std::to_string(ours.versions.max));
      }
      continue;
    }
    out.versions_[static_cast<std::size_t>(key)] = hi;
  }
  return out;
}

std::optional<std::int16_t> NegotiatedVersions::version(ApiKey key) const {
  const auto k = static_cast<std::int16_t>(key);
  if (k < 0 || static_cast<std::size_t>(k) >= versions_.size()) return std::nullopt;
  const std::int16_t v = versions_[static_cast<std::size_t>(k)];
  if (v < 0) return std::nullopt;
  return v;
}

std::string NegotiatedVersions::describe() const {
  std::string out;
  for (ApiKey key : {ApiKey::kProduce, ApiKey::kMetadata, ApiKey::kInitProducerId, ApiKey::kApiVersions}) {
    if (!out.empty()) out += ", ";
    out += api_name(key);
    const auto v = version(key);
    out += v ? " v" + std::to_string(*v) : std::string(" unusable");
  }
  return out;
}

Decoded<ApiVersionsResponse> decode_api_versions_response(ByteView body, std::int16_t sent_version) {
  auto at_sent = decode_exactly(body, sent_version);
  if (at_sent || sent_version == 0) return at_sent;
  auto at_v0 = decode_exactly(body, 0);
  if (at_v0) return at_v0;
  return at_sent;  // the error at the version we asked for says more
}

std::int16_t api_versions_retry_version(const ApiVersionsResponse& response, std::int16_t sent_version) {
  for (const ApiVersionRange& r : response.api_keys) {
    if (r.api_key != static_cast<std::int16_t>(ApiKey::kApiVersions)) continue;
    const std::int16_t v = std::min<std::int16_t>(r.max_version, sent_version - 1);
    return std::max<std::int16_t>(v, 0);
  }
  return 0;
}

bool client_throttles(ApiKey key, std::int16_t version) {
  switch (key) {
    case ApiKey::kProduce:
    case ApiKey::kMetadata:
      return version >= 6;
    case ApiKey::kApiVersions:
      return version >= 2;
    case ApiKey::kInitProducerId:
      return version >= 1;
    case ApiKey::kFetch:
      return version >= 8;
    case ApiKey::kListOffsets:
      return version >= 3;
    case ApiKey::kDescribeConfigs:
      return version >= 2;
    default:
      return false;
  }
}

}  // namespace pp::upstream
