// The primitives SCRAM is built from (RFC 5802 section 2.2), over OpenSSL's
// libcrypto: H, HMAC and Hi (PBKDF2 with HMAC as the PRF).
#pragma once

#include <optional>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/upstream/sasl/scram.h"

namespace pp::upstream::sasl {

Bytes scram_hash(ScramHash hash, ByteView data);
Bytes scram_hmac(ScramHash hash, ByteView key, ByteView data);
Bytes scram_hi(ScramHash hash, std::string_view password, ByteView salt, int iterations);
// `count` random bytes from RAND_bytes, or nullopt when its generator failed.
std::optional<Bytes> random_bytes(std::size_t count);

}  // namespace pp::upstream::sasl
