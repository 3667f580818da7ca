// The [listener] settings of docs/design/INTERFACES.md that the front end uses, plus the
// front end's own bounds ("Bounded everything", docs/design/ARCHITECTURE.md)
// with defaults no operator should need to touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proxy/frontend/access_rules.h"
#include "proxy/frontend/client_producers.h"
#include "proxy/net/tcp.h"
#include "proxy/records/compression.h"

namespace pp {

// The floor of max_decoded_bytes_per_request, for small buffer budgets: a
// 1 MiB request (the largest the Java producer and librdkafka send by default)
// of the smallest RecordBatch v2 records (8 bytes) decodes to about 22 MiB,
// and its copy into upstream batches counts about 3 MiB more.
inline constexpr std::size_t kMinDecodedBytesPerRequest = 32 * 1048576;

// What a client that has not authenticated may send in one frame on a SASL
// listener: Kafka's sasl.server.max.receive.size default (512 KiB), so a
// token claiming 100 MB is refused from its prefix, nothing allocated.
inline constexpr std::size_t kUnauthenticatedMaxFrameBytes = 524288;

struct FrontendConfig {
  // listener.address: where legacy clients connect (loopback by default).
  net::HostPort listen_address{"127.0.0.1", 9092};
  // listener.advertised_address: the one broker Metadata names. An empty host
  // means the listen host; port 0 means the port actually bound (useful when
  // listening on port 0 in tests).
  net::HostPort advertised_address{"", 0};
  std::size_t max_connections = 1024;
  // Connections from one IP address at once; 0: no limit. A sidecar's
  // clients all come from loopback, where it would only lower
  // max_connections; it is for a proxy listening beyond its host.
  std::size_t max_connections_per_peer = 0;
  // Checked from the 4-byte size prefix, before any of the frame is buffered.
  std::size_t max_request_bytes = 16777216;
  // A connection with no bytes in either direction and nothing pending for
  // this long is closed (Kafka's connections.max.idle.ms).
  std::int64_t idle_timeout_ms = 600000;
  // listener.max_request_hold_ms: the longest a Produce request is held
  // before it is answered, whatever its timeout_ms says (produce_hold_ms).
  std::int64_t max_request_hold_ms = 30000;
  // A request frame must arrive whole within this from its first byte (time
  // its reads were paused by back-pressure not counted); 0: no limit.
  std::int64_t frame_timeout_ms = 30000;
  // [listener.tls] (the context itself: Frontend::set_tls_context): a TLS
  // handshake must be done this soon, and whether client certificates are
  // required (then every client has a certificate principal).
  std::int64_t tls_handshake_timeout_ms = 10000;
  bool tls_client_certificates_required = false;

  // Requests read from one connection and not yet answered. Kafka brokers read
  // one request per connection at a time; we allow pipelining (a client's
  // max.in.flight) but bound it, so one client cannot queue unbounded work.
  // The daemon sizes it from the memory budget (pending_requests_cap).
  std::size_t max_pending_requests_per_connection = 128;
  // Responses queued to a client that does not read them: over this, stop
  // reading its requests until the socket drains.
  std::size_t max_write_queue_bytes = 8 * 1048576;
  // Cap on the bytes one request's compressed record sets may decompress to,
  // all partitions together (a decompression bomb stops here, as
  // MESSAGE_TOO_LARGE for the partition that crossed it).
  std::size_t max_decompressed_bytes_per_request = 256 * 1048576;
  // Cap on what one request decodes to in memory, all partitions together:
  // decompressed bytes plus the record and header views made from them and
  // the upstream batch bytes they will be copied into
  // (ProduceConversionOptions::max_decoded_bytes). The wire size says little
  // about it: an empty record header is 2 bytes on the wire and 40 in memory.
  // The daemon sets it to producer.buffer_memory_bytes (a request is held,
  // decoded, until delivered, so one request can never need more than the
  // whole buffer), but at least kMinDecodedBytesPerRequest.
  std::size_t max_decoded_bytes_per_request = 64 * 1048576;
  // What a request may decode to beyond the budget's room while nothing in
  // the pipeline would give memory back ("Overdraft" under "Bounded
  // everything", docs/design/ARCHITECTURE.md): the budget's one excess that
  // is not a share of it. The daemon keeps this default: a default-sized
  // request always fits in it, even with no room at all.
  std::size_t decode_overdraft_bytes = kMinDecodedBytesPerRequest;

  // listener.message_timestamp_after_max_ms / _before_max_ms (-1: no
  // limit): CreateTime records further from the wall clock are answered
  // INVALID_TIMESTAMP for their partition before batching.
  std::int64_t timestamp_after_max_ms = 3600000;
  std::int64_t timestamp_before_max_ms = -1;
  // A record that cannot fit in an upstream request alone (the pipeline's
  // PipelineConfig::max_request_bytes) is answered MESSAGE_TOO_LARGE for its
  // partition instead of becoming a request the broker drops.
  std::size_t max_upstream_batch_bytes = 16 * 1048576;
  // producer.compression: a record over its topic's max.message.bytes may
  // still fit once compressed, so it is compressed alone before it is refused.
  CompressionCodec upstream_compression = CompressionCodec::kNone;

  // [listener.sasl]: the mechanisms offered (empty: SASL off, every client
  // served unauthenticated as before) and KIP-368's session lifetime (0:
  // none). Before a client authenticates, frames over
  // kUnauthenticatedMaxFrameBytes are refused from their size prefix.
  std::vector<std::string> sasl_mechanisms;
  std::int64_t sasl_session_lifetime_ms = 0;

  // listener.max_client_producers, client_producer_idle_ms,
  // client_batches_to_retain: the idempotent clients' state (ClientProducers).
  // A first_producer_id below 0 means a random start, so ids handed out
  // before a restart are unlikely to be handed out again after it.
  ClientProducersConfig client_producers{10000, 86400000, 5, -1};

  // [[listener.principals]]: what each principal may do and its produce
  // quota (AccessRules). Empty: every client may do everything.
  std::vector<PrincipalGrant> principals;
};

// max_pending_requests_per_connection from producer.buffer_memory_bytes: one
// pending request per 64 KiB of budget (1024 at the default 64 MiB), at least
// 128. The budget already bounds what pending requests hold (each keeps its
// frame, charged); the count only bounds the bookkeeping of tiny requests and
// must not be what stops a fast client. A client sending one partition per
// request (librdkafka) keeps as many requests pending as it sends in an
// upstream round trip; a cap below that stops its reads while its records
// wait unread in the kernel's socket buffers, where nothing batches or
// measures them (docs/BENCHMARKS.md has the measurements).
inline constexpr std::size_t kMinPendingRequestsPerConnection = 128;
inline constexpr std::size_t kBudgetBytesPerPendingRequest = 65536;
inline std::size_t pending_requests_cap(std::size_t buffer_memory_bytes) {
  const std::size_t by_budget = buffer_memory_bytes / kBudgetBytesPerPendingRequest;
  return by_budget > kMinPendingRequestsPerConnection ? by_budget : kMinPendingRequestsPerConnection;
}

}  // namespace pp
