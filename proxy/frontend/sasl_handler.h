// Client SASL on the listener (KIP-43, KIP-152, KIP-368), the way Kafka's
// SaslServerAuthenticator serves it:
//   - SaslHandshake v0, then the mechanism's tokens as bare size-prefixed
//     frames with no Kafka header (Java clients 0.10.0-0.10.1, kafka-python);
//   - SaslHandshake v1, then SaslAuthenticate v0-v2 (0.10.2+, librdkafka),
//     v1+ told the session's lifetime and allowed to re-authenticate.
// A failed login is counted, logged on one rate-limited line (peer, user,
// mechanism, reason; never a secret) and answered after the peer address's
// delay (login_throttle.h); then the connection closes, as Kafka closes it.
// A step that waits on a password hash (PLAIN) has it run on libuv's pool
// (password_checks.h) and is answered when it is back; meanwhile the session
// takes no further request. Loop thread only; called by RequestDispatch.
#pragma once

#include "proxy/base/frame_buffer.h"
#include "proxy/frontend/client_session.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

// Whether `h` may be served on this connection now. On a SASL listener a
// client that has not authenticated (by SASL, or by a verified client
// certificate on a TLS listener) is served only ApiVersions, SaslHandshake
// and SaslAuthenticate, and an authenticated session past its
// lifetime only a re-authentication; anything else closes the connection
// with a log line (Kafka does the same). Always true without SASL.
bool admit_request(ClientSession& session, const RequestHeader& h);

void handle_sasl_handshake(ClientSession& session, const RequestHeader& h, WireReader& r);
void handle_sasl_authenticate(ClientSession& session, const RequestHeader& h, WireReader& r);
// A frame after SaslHandshake v0: the client's SASL token itself.
void handle_raw_sasl_token(ClientSession& session, const FrameBuffer& frame);

}  // namespace pp
