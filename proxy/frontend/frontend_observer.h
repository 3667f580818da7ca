// What the front end reports as it works, for the metrics layer
// (docs/design/INTERFACES.md client_* / records_received / backpressure_active). The
// counters are also kept as plain numbers (FrontendCounters) for tests and a
// pull-style exporter. Called on the loop thread, per request or per event,
// never per record.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include "proxy/protocol/api_key.h"

namespace pp {

// How a partition of a Produce request was answered at the request's
// deadline (docs/design/PIPELINE.md, "Answer by the client's deadline").
enum class DeadlineOutcome : std::uint8_t {
  kWithdrawn,  // none of its records had been sent upstream: NOT_ENOUGH_REPLICAS
  kInFlight,   // some were in flight upstream: REQUEST_TIMED_OUT
};
inline std::string_view to_string(DeadlineOutcome outcome) {
  return outcome == DeadlineOutcome::kWithdrawn ? "withdrawn" : "in_flight";
}

class FrontendObserver {
 public:
  virtual ~FrontendObserver() = default;

  virtual void on_client_connections(std::int64_t /*open*/) {}
  // A client connection closed for TLS: its handshake failed or timed out,
  // or it began one on a plaintext listener. `reason` is a fixed label
  // (client_tls_failure_reason, "timeout", "plaintext_listener").
  virtual void on_client_tls_failure(std::string_view /*reason*/) {}
  // A request whose header was read, by api and version (unknown apis too).
  virtual void on_request(ApiKey /*api*/, std::int16_t /*version*/) {}
  // Records accepted from a client and handed to the pipeline.
  virtual void on_records_received(std::int64_t /*records*/, std::int64_t /*bytes*/) {}
  virtual void on_backpressure(bool /*active*/) {}
  // One connection stopped reading: it holds its fair share of the budget.
  virtual void on_share_pause() {}
  // A Produce request waited for room in the memory budget to decode in.
  virtual void on_request_parked() {}
  // A Produce request had a partition answered NOT_ENOUGH_REPLICAS: it would
  // decode past the budget's room plus the overdraft while nothing drained.
  virtual void on_request_refused_for_memory() {}
  // A Produce request from receipt to its response queued on the socket
  // (acks 1/-1), or to its records' submission (acks 0).
  virtual void on_produce_done(std::int16_t /*acks*/, std::int64_t /*duration_ms*/) {}
  // One Produce request, by what the client says it is (ClientSession::
  // client_software), the Produce version and the message format (magic) of
  // its first record set (-1: none), so operators see who still sends v0-v2
  // and magic 0/1 (as Kafka's DeprecatedRequestsPerSec does).
  virtual void on_client_produce(std::string_view /*software*/, std::string_view /*software_version*/,
                                 std::int16_t /*version*/, std::int8_t /*magic*/) {}
  // An idempotent client's retry recognised: outcome "acked" (answered with
  // the original offsets) or "in_flight" (attached to the original).
  virtual void on_client_duplicate(std::string_view /*outcome*/) {}
  // Per principal (ClientSession::principal, by name; the metrics layer caps
  // how many names get their own series): a request of any API, and a
  // Produce request's bytes with the quota throttle it earned (0: none).
  virtual void on_principal_request(std::string_view /*principal*/) {}
  virtual void on_principal_produce(std::string_view /*principal*/, std::int64_t /*bytes*/,
                                    std::int64_t /*throttle_ms*/) {}
  // A request, or a topic of one, refused for lack of an operation
  // ("write", "describe", "idempotent_write").
  virtual void on_authorization_denied(std::string_view /*principal*/, std::string_view /*operation*/) {}
  // A partition of a Produce request answered at the request's deadline,
  // with how many records it held.
  virtual void on_deadline_answer(DeadlineOutcome /*outcome*/, std::int64_t /*records*/) {}
  // A client SASL authentication ended: `mechanism` as enabled on the
  // listener ("none" when the handshake named none of them), `result`
  // "success" or the failure's reason (sasl::to_string(AuthFailureReason)).
  virtual void on_authentication(std::string_view /*mechanism*/, std::string_view /*result*/) {}
};

struct FrontendCounters {
  std::int64_t client_connections = 0;  // open now
  std::uint64_t connections_accepted_total = 0;
  std::uint64_t connections_refused_total = 0;  // over max_connections
  std::uint64_t connections_closed_for_errors_total = 0;
  // (api key, version) -> requests. Only (api, version) pairs we describe get
  // their own entry, so a peer cannot grow this map; the rest count as (-1, -1).
  std::map<std::pair<std::int16_t, std::int16_t>, std::uint64_t> requests_total;
  std::uint64_t records_received_total = 0;
  std::uint64_t received_bytes_total = 0;
  bool backpressure_active = false;
  std::uint64_t backpressure_pauses_total = 0;
  std::uint64_t backpressure_ms_total = 0;  // completed pauses only
  // A connection stopped reading because it held its fair share of the
  // budget while another connection wanted memory.
  std::uint64_t share_pauses_total = 0;
  std::uint64_t requests_parked_total = 0;
  std::uint64_t requests_refused_for_memory_total = 0;
  std::uint64_t client_tls_failures_total = 0;  // on_client_tls_failure, every reason
  std::uint64_t client_duplicates_acked_total = 0;
  std::uint64_t client_duplicates_in_flight_total = 0;
  std::uint64_t client_sequence_errors_total = 0;  // OUT_OF_ORDER / INVALID_PRODUCER_EPOCH answered
  // Partitions of Produce requests answered at the request's deadline.
  std::uint64_t deadline_withdrawn_total = 0;
  std::uint64_t deadline_in_flight_total = 0;
  // Client SASL authentications completed and failed.
  std::uint64_t authentication_successes_total = 0;
  std::uint64_t authentication_failures_total = 0;
};

}  // namespace pp
