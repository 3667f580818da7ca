// Version negotiation with one broker (KIP-35, KIP-511): what ApiVersions
// answered, turned into the version of each API the proxy uses with it.
// Pure functions, so the rules are unit-tested without sockets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/protocol/api_key.h"
#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/wire_reader.h"

namespace pp::upstream {

// The ApiVersions version a connection tries first: v3 is the first flexible
// one and carries client_software_name (KIP-511); v4 only fixes a feature
// range quirk (KAFKA-17011) the proxy doesn't read.
inline constexpr std::int16_t kFirstApiVersionsVersion = 3;

// Our own floor per API, above what the codec can decode: Produce v3 is the
// first that carries RecordBatch v2, the only format with producer id and
// sequence (docs/design/PIPELINE.md A). Everything else: the codec's minimum.
std::int16_t minimum_usable_version(ApiKey key);

class NegotiatedVersions {
 public:
  NegotiatedVersions() { versions_.fill(-1); }

  // For every API we describe: min(our max, their max), if that is at least
  // max(our min, their min); otherwise the API is unusable with this broker.
  static NegotiatedVersions negotiate(std::span<const ApiVersionRange> broker_ranges);

  std::optional<std::int16_t> version(ApiKey key) const;
  // "Produce v7, Metadata v2, InitProducerId v4, ApiVersions v2", for the log.
  std::string describe() const;
  // The APIs the upstream layer needs (Produce, Metadata, InitProducerId)
  // that this broker can't serve, with both ranges, for an error line.
  const std::vector<std::string>& unusable() const { return unusable_; }

 private:
  std::array<std::int16_t, 64> versions_{};  // by api key; -1: unusable
  std::vector<std::string> unusable_;
};

// Decodes an ApiVersions response body sent in answer to `sent_version`.
// A broker answers a version it doesn't speak with UNSUPPORTED_VERSION in the
// v0 layout (KIP-511), so a body that doesn't parse at `sent_version` is read
// again at v0, as Java's ApiVersionsResponse.parse does.
Decoded<ApiVersionsResponse> decode_api_versions_response(ByteView body, std::int16_t sent_version);

// After UNSUPPORTED_VERSION: the highest ApiVersions version the broker lists
// below the one we sent, or v0 when it lists none (librdkafka's mock lists
// nothing usable in its malformed v3 answer).
std::int16_t api_versions_retry_version(const ApiVersionsResponse& response, std::int16_t sent_version);

// KIP-219: from these versions on, the broker answers at once and expects the
// client to hold back for throttle_time_ms; before them it delayed the answer
// itself, so waiting again would double the penalty (Java's
// AbstractResponse.shouldClientThrottle).
bool client_throttles(ApiKey key, std::int16_t version);

}  // namespace pp::upstream
