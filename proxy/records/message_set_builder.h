// Writing legacy MessageSets (magic 0/1), as Kafka 0.8-0.10 clients did
// (MemoryRecordsBuilder with magic < 2). The proxy never sends these upstream;
// tests, fuzz seeds and load generators use them to play an old client.
#pragma once

#include <cstdint>
#include <optional>

#include "proxy/base/bytes.h"
#include "proxy/records/compression.h"
#include "proxy/records/message_set.h"
#include "proxy/records/record.h"

namespace pp {

struct MessageSetBuildOptions {
  std::int8_t magic = 1;  // 0 or 1
  // kNone: plain messages. Otherwise one wrapper message holding them all.
  CompressionCodec compression = CompressionCodec::kNone;  // zstd is invalid below magic 2
  // Defaults to what Kafka's own clients wrote: the broken HC for magic 0
  // (KIP-57), the standard frame for magic 1.
  std::optional<Lz4Framing> lz4_framing;
  TimestampType timestamp_type = TimestampType::kCreateTime;  // magic 1 only
};

class MessageSetBuilder {
 public:
  explicit MessageSetBuilder(const MessageSetBuildOptions& options = {});

  // Appends with an explicit offset (magic 0 inner offsets are arbitrary; an
  // old client writes 0..n-1 for magic 1). `timestamp` is ignored for magic 0.
  void append(std::int64_t offset, std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value);
  // Appends with the next offset: 0, 1, 2, ...
  void append(std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value) {
    append(next_offset_, timestamp, key, value);
  }

  std::size_t message_count() const { return count_; }

  // The finished set. A compressed set is one wrapper whose offset is
  // `wrapper_offset`, by default the last inner offset (what the Java client
  // wrote; kafka-python and some librdkafka versions wrote 0), and whose
  // magic-1 timestamp is the largest inner one.
  Bytes build(std::optional<std::int64_t> wrapper_offset = std::nullopt) const;

 private:
  MessageSetBuildOptions options_;
  Bytes messages_;  // the plain messages, in wire order
  std::int64_t next_offset_ = 0;
  std::int64_t last_offset_ = 0;
  std::int64_t max_timestamp_ = -1;
  std::size_t count_ = 0;
};

// Appends one log entry (offset, size, message) to `out`; the CRC-32 is
// computed here. Exposed for tests that need hand-made messages.
void append_legacy_message(Bytes& out, std::int64_t offset, std::int8_t magic, std::int8_t attributes,
                           std::int64_t timestamp, std::optional<ByteView> key, std::optional<ByteView> value);

}  // namespace pp
