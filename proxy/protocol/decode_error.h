// The one error type every decoder of peer bytes returns: which field, at which
// byte offset, and what was wrong. Peer-caused, so a value, never an exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pp {

enum class DecodeErrorKind : std::uint8_t {
  kTruncated,       // fewer bytes than the field needs
  kNegativeLength,  // a length below -1, or -1 where null is not allowed
  kLengthTooLarge,  // a length or count larger than the bytes that remain
  kVarintTooLong,   // a varint longer than its type allows
  kInvalidValue,    // a value outside the field's domain
  kBadChecksum,     // CRC mismatch
  kUnsupported,     // a version, magic or codec we do not speak
  kTooLarge,        // over a configured bound (frame size, decompressed size)
  kTrailingBytes,   // bytes left where the format says the structure ends
  kOutOfOrder,      // tagged-field tags not strictly increasing (KIP-482)
  kTooMany,         // more entries than the decoder accepts (unknown tagged fields)
  kOverBudget,      // what it decodes to in memory is over the per-request cap
};

std::string_view to_string(DecodeErrorKind kind);

struct DecodeError {
  DecodeErrorKind kind = DecodeErrorKind::kTruncated;
  std::size_t offset = 0;  // from the start of the buffer being decoded
  std::string field;       // dotted path, filled in as the error travels up

  // "field 'topics[0].name' at offset 12: truncated"
  std::string describe() const;

  // Prefixes the field path while unwinding out of nested structures.
  DecodeError& within(std::string_view outer);
};

}  // namespace pp
