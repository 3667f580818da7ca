// Internal: the LZ4 frame descriptor's header checksum (HC), which Kafka
// 0.8/0.9 computed over the wrong bytes (KIP-57). Separate so tests can check
// the xxHash32 against known vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "proxy/base/bytes.h"

namespace pp::detail {

std::uint32_t xxh32(ByteView data, std::uint32_t seed = 0);

// Frame magic 0x184D2204 (little-endian on the wire).
inline constexpr std::uint32_t kLz4FrameMagic = 0x184D2204u;

// Length of magic + frame descriptor up to and including the HC byte, read
// from the FLG byte; nullopt when `frame` is too short or not an LZ4 frame.
std::optional<std::size_t> lz4_header_length(ByteView frame);

// HC as the LZ4 frame format defines it: second byte of xxh32(descriptor).
std::uint8_t lz4_header_checksum(ByteView frame, std::size_t header_length);
// HC as Kafka's KafkaLZ4BlockOutputStream wrote it before KIP-57: hashed from
// the frame magic instead of from FLG.
std::uint8_t lz4_legacy_header_checksum(ByteView frame, std::size_t header_length);

}  // namespace pp::detail
