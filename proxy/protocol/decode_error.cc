#include "proxy/protocol/decode_error.h"

namespace pp {

std::string_view to_string(DecodeErrorKind kind) {
  switch (kind) {
    case DecodeErrorKind::kTruncated:
      return "truncated";
    case DecodeErrorKind::kNegativeLength:
      return "negative length";
    case DecodeErrorKind::kLengthTooLarge:
      return "length larger than the remaining bytes";
    case DecodeErrorKind::kVarintTooLong:
      return "varint too long";
    case DecodeErrorKind::kInvalidValue:
      return "invalid value";
    case DecodeErrorKind::kBadChecksum:
      return "checksum mismatch";
    case DecodeErrorKind::kUnsupported:
      return "unsupported";
    case DecodeErrorKind::kTooLarge:
      return "over the configured size limit";
    case DecodeErrorKind::kTrailingBytes:
      return "unexpected trailing bytes";
    case DecodeErrorKind::kOutOfOrder:
      return "tags not in strictly increasing order";
    case DecodeErrorKind::kTooMany:
      return "more entries than the decoder accepts";
    case DecodeErrorKind::kOverBudget:
      return "decoded size over the per-request memory cap";
  }
  return "unknown";
}

std::string DecodeError::describe() const {
  std::string out = "field '";
  out += field.empty() ? "<root>" : field;
  out += "' at offset ";
  out += std::to_string(offset);
  out += ": ";
  out += to_string(kind);
  return out;
}

DecodeError& DecodeError::within(std::string_view outer) {
  if (outer.empty()) return *this;
  if (field.empty()) {
    field = std::string(outer);
  } else if (field.front() == '[') {
    field = std::string(outer) + field;
  } else {
    field = std::string(outer) + "." + field;
  }
  return *this;
}

}  // namespace pp
