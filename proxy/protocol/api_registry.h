// The APIs this codebase describes, in one table: the ApiVersions answer, the
// header versions and the per-version tests are all derived from it.
#pragma once

#include <span>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct ApiSpec {
  ApiKey key;
  Versions versions;            // what our codec decodes and encodes
  std::int16_t flexible_since;  // first flexible version (KIP-482)
};

// Every described API, ordered by key.
std::span<const ApiSpec> described_apis();
const ApiSpec* find_api(ApiKey key);

}  // namespace pp
