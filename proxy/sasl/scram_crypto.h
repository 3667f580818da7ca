// The primitives SCRAM is built from (RFC 5802 section 2.2), over OpenSSL's
// libcrypto: H, HMAC and Hi (PBKDF2 with HMAC as the PRF), shared by the
// upstream's SCRAM client and the client listener's SCRAM server and
// password hashes. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"

namespace pp::sasl {

enum class ScramHash : std::uint8_t { kSha256, kSha512 };

// Kafka's minimum iteration count (ScramMechanism.minIterations); the
// client refuses a server asking for more than the maximum, which bounds the
// PBKDF2 work a hostile broker can make it do on the loop.
inline constexpr int kScramMinIterations = 4096;
inline constexpr int kScramMaxIterations = 65536;

// "SCRAM-SHA-256" / "SCRAM-SHA-512": the mechanism's name on the wire.
std::string_view scram_mechanism_name(ScramHash hash);

Bytes scram_hash(ScramHash hash, ByteView data);
Bytes scram_hmac(ScramHash hash, ByteView key, ByteView data);
Bytes scram_hi(ScramHash hash, std::string_view password, ByteView salt, int iterations);
// `count` random bytes from RAND_bytes (a CSPRNG), or nullopt when its
// generator failed.
std::optional<Bytes> random_bytes(std::size_t count);
// Equality in time that depends on the sizes only (CRYPTO_memcmp): for
// comparing what a peer sent with a secret-derived value.
bool constant_time_equal(ByteView a, ByteView b);

}  // namespace pp::sasl
