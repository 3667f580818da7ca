// Credentials that stand in for a user the users file does not hold, so
// that the server's answers do not tell unknown user names from known ones
// (RFC 5802's security considerations: an unknown user is answered with a
// made-up but consistent salt and iteration count, so that the
// server-first-message does not confirm which names exist).
// Each value is an HMAC-SHA-256 of the listener's decoy secret over the
// mechanism and the user name: stable for one name for as long as the secret
// lives (one daemon run), different between names and mechanisms, shaped as
// a real entry written by `users add` (a 24-byte salt, kDefaultIterations,
// keys of the hash's size). No password verifies against them except by an
// HMAC collision. Pure functions; any thread.
#pragma once

#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/sasl/user_credentials.h"

namespace pp::sasl {

// Bytes of a decoy secret: what the listener draws from RAND_bytes at start.
inline constexpr std::size_t kDecoySecretBytes = 32;

ScramCredential decoy_scram_credential(ScramHash hash, ByteView secret, std::string_view user);
PlainCredential decoy_plain_credential(ByteView secret, std::string_view user);

}  // namespace pp::sasl
