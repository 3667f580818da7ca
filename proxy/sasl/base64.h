// Base64 (RFC 4648 section 4) for SCRAM's salt, proof and signature, and the
// URL-safe alphabet (section 5) for a JWT's payload. Decoding is strict: any
// byte outside the alphabet, misplaced padding or a wrong length is refused
// (a peer's bytes, fuzzed with the SCRAM parsers).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"

namespace pp::sasl {

std::string base64_encode(ByteView data);
// Padded, length a multiple of 4.
std::optional<Bytes> base64_decode(std::string_view text);
// '-' and '_' for '+' and '/', padding optional (JWTs omit it).
std::optional<Bytes> base64url_decode(std::string_view text);

}  // namespace pp::sasl
