#include "proxy/protocol/api_registry.h"

#include "proxy/protocol/messages/all.h"

namespace pp {

namespace {

template <class Request, class Response>
constexpr ApiSpec spec_of() {
  static_assert(Request::kApiKey == Response::kApiKey);
  static_assert(Request::kFlexibleSince == Response::kFlexibleSince);
  static_assert(Request::kVersions.min == Response::kVersions.min && Request::kVersions.max == Response::kVersions.max);
  return ApiSpec{Request::kApiKey, Request::kVersions, Request::kFlexibleSince};
}

template <class List>
struct SpecTable;
template <class... Requests, class... Responses>
struct SpecTable<ApiList<ApiPair<Requests, Responses>...>> {
  static constexpr ApiSpec kSpecs[] = {spec_of<Requests, Responses>()...};
};

using Table = SpecTable<AllApis>;

}  // namespace

std::span<const ApiSpec> described_apis() {
  return Table::kSpecs;
}

const ApiSpec* find_api(ApiKey key) {
  for (const auto& spec : Table::kSpecs) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

}  // namespace pp
