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
// The session is closing (the client left, a timeout, a stream error) with a
// SASL exchange under way: a SaslHandshake was taken and the exchange has
// neither completed nor failed (no token yet, a SCRAM exchange half done, or
// a password check still running). Counted as a failed login, reason
// "abandoned", recorded as a failure of the peer's address in the login
// slow-down (LoginThrottle: the next failure from that address waits
// longer), and logged on the failures' rate-limited line (peer, user if
// one was named, mechanism; never a secret). Nothing when no exchange is
// under way, or when the front end itself is stopping. The session's close
// calls it once, before the connection goes.
void note_abandoned_login(ClientSession& session);

}  // namespace pp
