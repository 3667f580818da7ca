// From one request frame to what the connection must do: write a response
// frame, write nothing (acks=0), or close the connection because the peer sent
// something malformed or unsupported (Kafka closes on a request it can't
// parse; ApiVersions alone answers UNSUPPORTED_VERSION, KIP-511).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/protocol/api_key.h"
#include "tests/broker/cluster_state.h"
#include "tests/broker/handlers.h"

namespace pp::test_broker {

struct RoutedRequest {
  enum class Action : std::uint8_t { kRespond, kNoResponse, kClose };
  Action action = Action::kRespond;
  ApiKey api = ApiKey::kProduce;
  std::int16_t version = 0;
  std::int32_t correlation_id = 0;
  Bytes frame;                  // kRespond: the whole response frame
  std::vector<HeldBatch> held;  // Produce: release when written or dropped
  // A Fetch that found nothing is parked (the broker's DelayedFetch) for up
  // to wait_ms, then answered with whatever `recompute` finds then.
  std::uint32_t wait_ms = 0;
  std::function<Bytes()> recompute;
  std::string close_reason;  // kClose
};

RoutedRequest route_request(ClusterState& cluster, BrokerId self, ByteView frame);

}  // namespace pp::test_broker
