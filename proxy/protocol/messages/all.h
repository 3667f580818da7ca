// Every described API as a (request, response) pair. Adding an API here puts it
// in ApiVersions, the header-version table and the generic round-trip tests.
#pragma once

#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"

namespace pp {

template <class Request, class Response>
struct ApiPair {
  using RequestType = Request;
  using ResponseType = Response;
};

template <class... Pairs>
struct ApiList {};

using AllApis = ApiList<ApiPair<ProduceRequest, ProduceResponse>,
                        ApiPair<MetadataRequest, MetadataResponse>,
                        ApiPair<ApiVersionsRequest, ApiVersionsResponse>>;

}  // namespace pp
