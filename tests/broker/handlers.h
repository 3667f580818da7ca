// Request handlers of one broker of the test cluster: pure functions from a
// decoded request to a response over ClusterState (no sockets), so tests can
// call them directly. The server (broker_server.h) frames and delays them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/messages/api_versions.h"
#include "proxy/protocol/messages/fetch.h"
#include "proxy/protocol/messages/init_producer_id.h"
#include "proxy/protocol/messages/list_offsets.h"
#include "proxy/protocol/messages/metadata.h"
#include "proxy/protocol/messages/produce.h"
#include "tests/broker/cluster_state.h"

namespace pp::test_broker {

// An API this broker serves, the versions it advertises, and its first
// flexible version (for the header, whether or not the shared registry
// describes the API yet).
struct ServedApi {
  ApiKey key;
  Versions versions;
  std::int16_t flexible_since;
};
// Legacy brokers stop Produce at v13: they don't know KIP-1269's v14.
std::span<const ServedApi> served_apis(bool legacy);
const ServedApi* find_served_api(bool legacy, ApiKey key);

// A batch the watchdog counts as held until its response is written.
struct HeldBatch {
  Partition* partition = nullptr;
  std::int64_t producer_id = -1;
};
void release(std::span<const HeldBatch> held);

struct ProduceResult {
  ProduceResponse response;
  std::vector<HeldBatch> held;
  std::size_t appended_batches = 0;
};
// Produce v3-v14 as docs/design/PIPELINE.md D.2 orders the checks. Registers every
// received batch with the partition's watchdog (release() the result's
// `held` when the response is written or dropped).
ProduceResult handle_produce(ClusterState& cluster, BrokerId self, const ProduceRequest& request, std::int16_t version);

MetadataResponse handle_metadata(ClusterState& cluster, BrokerId self, const MetadataRequest& request,
                                 std::int16_t version);

// `error`: kUnsupportedVersion answers a too-new request in the v0 layout,
// still listing our ranges so the client can retry lower (KIP-511).
ApiVersionsResponse handle_api_versions(const ClusterState& cluster, BrokerId self, ErrorCode error = ErrorCode::kNone);

InitProducerIdResponse handle_init_producer_id(ClusterState& cluster, const InitProducerIdRequest& request,
                                               std::int16_t version);

// The response's RecordsView fields point into `buffers`; keep the result
// alive until it is encoded.
struct FetchResult {
  FetchResponse response;
  std::vector<std::unique_ptr<Bytes>> buffers;
  std::size_t record_bytes = 0;
  bool has_error = false;
};
FetchResult handle_fetch(ClusterState& cluster, BrokerId self, const FetchRequest& request, std::int16_t version);

ListOffsetsResponse handle_list_offsets(ClusterState& cluster, BrokerId self, const ListOffsetsRequest& request,
                                        std::int16_t version);

}  // namespace pp::test_broker
