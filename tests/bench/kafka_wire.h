// Plain-socket Kafka plumbing for bench_chatty_client: blocking connect,
// whole-frame writes, frame reassembly, a Metadata lookup, and the one-record
// Produce requests an old chatty client sends. Codecs come from
// proxy/protocol and proxy/records, so the bytes are the ones the proxy's
// own tests agree on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "proxy/base/bytes.h"
#include "tests/bench/bench_common.h"

namespace pp::bench {

// Connects with TCP_NODELAY (a chatty client's requests are small and must
// not wait for Nagle). Returns -1 and prints why on failure.
int connect_to(const HostPort& to);
// Writes all of `data` on a blocking socket; false on error.
bool write_all(int fd, ByteView data);
// Reads one whole frame (size prefix stripped) on a blocking socket.
std::optional<Bytes> read_frame_blocking(int fd);

// Collects bytes from a non-blocking socket into whole frames.
class FrameAssembler {
 public:
  // Reads what is there now; false when the peer closed or errored.
  bool read_some(int fd);
  // The next complete frame without its size prefix, if one is buffered.
  std::optional<Bytes> pop();

 private:
  Bytes buffer_;
  std::size_t consumed_ = 0;
};

// Partition -> leader address, from Metadata v1 asked of the first
// bootstrap server that answers. Empty on failure (printed).
std::map<std::int32_t, HostPort> partition_leaders(const std::string& bootstrap, const std::string& topic);

// One-record Produce request frames. v2: a magic-1 MessageSet with one
// message (a 0.10-era client); v3: a RecordBatch v2 with one record and no
// producer id (a 0.11-era client without idempotence).
Bytes produce_request(std::int16_t version, std::int32_t correlation_id, const std::string& topic,
                      std::int32_t partition, std::int16_t acks, ByteView value);
Bytes api_versions_request(std::int32_t correlation_id);

// The error code of the one partition a one-record Produce response answers,
// or -1 when the response does not decode or names no partition.
int produce_response_error(ByteView frame, std::int16_t version, std::int32_t* correlation_id);

}  // namespace pp::bench
