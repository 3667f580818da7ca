// What the pipeline needs from the upstream layer, as an interface: the real
// implementation is proxy/upstream's Upstream (libuv sockets); unit tests
// script it with a controlled clock ("The pipeline is a plain state machine",
// docs/design/ARCHITECTURE.md, rules of the house).
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/messages/init_producer_id.h"
#include "proxy/protocol/messages/produce.h"
#include "proxy/protocol/types.h"

namespace pp {

struct PartitionLeadership {
  ErrorCode error = ErrorCode::kNone;
  std::int32_t leader_id = -1;     // -1: no leader
  std::int32_t leader_epoch = -1;  // -1: broker too old to say (Metadata < v7)
};

struct TopicLeadership {
  ErrorCode error = ErrorCode::kNone;
  Uuid topic_id;                                // zero when the broker doesn't report ids (Metadata < v10)
  std::vector<PartitionLeadership> partitions;  // index = partition id
};

// The topics one Metadata answer described, as the broker reported them
// (indexes out of range already dropped by the upstream); the pipeline's
// TopicTable merges them into what it knows.
struct MetadataUpdate {
  std::vector<std::pair<std::string, TopicLeadership>> topics;
};

// A request that never got a response: the connection closed, or the client
// side request timeout fired. Both mean "maybe appended"
// (docs/design/PIPELINE.md, "Response handling").
using ProduceResult = std::expected<ProduceResponse, ErrorCode>;
using InitProducerIdResult = std::expected<InitProducerIdResponse, ErrorCode>;
// `sent_version` is the version the request went out as, which the response
// was decoded by: lower than asked when the connection negotiated less.
using ProduceDone = std::function<void(std::int16_t sent_version, ProduceResult)>;

class UpstreamPort {
 public:
  virtual ~UpstreamPort() = default;

  // Connected, version-negotiated, under max_in_flight_per_connection and not
  // throttled (KIP-219): a Produce request may be sent to `node` now. Asking
  // also starts connecting to a node that isn't connected yet.
  virtual bool can_send_produce(std::int32_t node) = 0;
  // The Produce version negotiated with `node` (highest both sides speak, >= 3).
  virtual std::int16_t produce_version(std::int32_t node) = 0;
  // Sent as given: for v13+ the caller fills every topic id. `done` runs
  // exactly once, later (never inside this call), with the response, or with
  // NETWORK_EXCEPTION (disconnect) / REQUEST_TIMED_OUT.
  virtual void send_produce(std::int32_t node, const ProduceRequest& request, std::int16_t version,
                            ProduceDone done) = 0;
  // Any ready broker; `done` once, later.
  virtual void send_init_producer_id(const InitProducerIdRequest& request,
                                     std::function<void(InitProducerIdResult)> done) = 0;
  // Coalesced, asynchronous; the answer arrives through the metadata listener
  // given to the pipeline (and topics confirmed unknown carry that error).
  virtual void request_metadata(const std::vector<std::string>& topics) = 0;
  // Closes the connection to `node`, failing its outstanding requests with
  // NETWORK_EXCEPTION (docs/design/PIPELINE.md, "Delivery timeout and
  // unresolved sequences": an expiring batch must not stay in flight).
  virtual void reset_connection(std::int32_t node) = 0;
  // KIP-951: endpoints of new leaders named in a ProduceResponse, so a leader
  // hint can be followed before the next metadata refresh.
  virtual void learn_brokers(const std::vector<NodeEndpoint>& endpoints) = 0;
  // A broker id the upstream can reach (from Metadata or learn_brokers): a
  // leader hint naming any other is not followed.
  virtual bool knows_broker(std::int32_t node) const = 0;
  // The brokers that lead partitions of the topics in use, as the pipeline's
  // TopicTable says: kept connected, and a disconnect of one makes the
  // upstream ask for metadata until the cluster names a reachable leader.
  virtual void set_leaders_in_use(const std::set<std::int32_t>& nodes) = 0;
};

}  // namespace pp
