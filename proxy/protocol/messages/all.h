// Every described API as a (request, response) pair. Adding an API here puts it
// in ApiVersions, the header-version table and the generic round-trip tests.
#pragma once

#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/messages/describe_configs.h"
#include "proxy/protocol/messages/fetch.h"
#include "proxy/protocol/messages/init_producer_id.h"
#include "proxy/protocol/messages/list_offsets.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/protocol/messages/sasl_authenticate.h"
#include "proxy/protocol/messages/sasl_handshake.h"

namespace pp {

template <class Request, class Response>
struct ApiPair {
  using RequestType = Request;
  using ResponseType = Response;
};

template <class... Pairs>
struct ApiList {};

using AllApis =
    ApiList<ApiPair<ProduceRequest, ProduceResponse>, ApiPair<FetchRequest, FetchResponse>,
            ApiPair<ListOffsetsRequest, ListOffsetsResponse>, ApiPair<MetadataRequest, MetadataResponse>,
            ApiPair<SaslHandshakeRequest, SaslHandshakeResponse>, ApiPair<ApiVersionsRequest, ApiVersionsResponse>,
            ApiPair<InitProducerIdRequest, InitProducerIdResponse>,
            ApiPair<SaslAuthenticateRequest, SaslAuthenticateResponse>,
            ApiPair<DescribeConfigsRequest, DescribeConfigsResponse>>;

}  // namespace pp
