// One client connection's SASL state on a listener with [listener.sasl]
// (KIP-43, KIP-152, KIP-368), held by its ClientSession:
//
//   kNone --SaslHandshake v0--> kRawTokens    (tokens as bare size-prefixed frames)
//   kNone --SaslHandshake v1--> kAuthenticate (tokens in SaslAuthenticate)
//   either --exchange complete--> authenticated (stage back to kNone)
//   authenticated --SaslHandshake v1--> kAuthenticate (KIP-368 re-authentication;
//                                       the name may not change)
//   any --failure--> kFailed (the connection closes after the delayed answer)
//
// Before the first completion only ApiVersions, SaslHandshake and
// SaslAuthenticate are served (sasl_handler.h). A completed session expires
// `session_lifetime_ms` after it completed (0: never) and is then closed on
// its next request other than a re-authentication.
//
// While a step's password check runs off the loop (checking()), the session
// takes no further request: the exchange's answer comes first.
//
// On a TLS listener with client certificates "requested", a client that
// presented a verified certificate is authenticated by it
// (authenticate_by_certificate): it is served without SASL, for as long as
// the connection lives, and may still log in with SASL, whose user then
// becomes its principal. Loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "proxy/net/timer.h"
#include "proxy/sasl/server_mechanism.h"

namespace pp {

class ClientAuth {
 public:
  enum class Stage : std::uint8_t { kNone, kRawTokens, kAuthenticate, kFailed };

  // `required`: the listener has SASL mechanisms; without, every client is
  // served as it always was (authenticated() stays false, required() false).
  explicit ClientAuth(bool required) : required_(required) {}

  bool required() const { return required_; }
  // Completed a SASL exchange.
  bool authenticated() const { return authenticated_; }
  // Authenticated by a verified client certificate (no SASL needed).
  bool by_certificate() const { return by_certificate_; }
  void authenticate_by_certificate() { by_certificate_ = true; }
  // Served as authenticated: by SASL or by a certificate.
  bool admitted() const { return authenticated_ || by_certificate_; }
  // A password check of this exchange is running off the loop.
  bool checking() const { return checking_; }
  void set_checking(bool checking) { checking_ = checking; }
  Stage stage() const { return stage_; }
  bool expects_raw_token() const { return stage_ == Stage::kRawTokens; }

  // A SaslHandshake accepted `mechanism`; its tokens come raw (v0) or in
  // SaslAuthenticate (v1).
  void begin(std::unique_ptr<sasl::ServerMechanism> mechanism, bool raw_tokens);
  // The exchange in progress; null outside one.
  sasl::ServerMechanism* mechanism() const { return mechanism_.get(); }
  // The exchange completed at `now_ms` as `user`: authenticated until
  // now_ms + lifetime_ms (lifetime 0: no expiry).
  void complete(const std::string& user, std::uint64_t now_ms, std::int64_t lifetime_ms);
  // The exchange failed: nothing more is taken from the connection.
  void fail();
  // An authenticated session past its lifetime.
  bool expired(std::uint64_t now_ms) const { return authenticated_ && expires_at_ms_ != 0 && now_ms >= expires_at_ms_; }
  // The authenticated user's name (the principal); empty before.
  const std::string& user() const { return user_; }
  // Where the delayed answer of a failure waits (login_throttle.h); owned
  // here so it goes with the session.
  net::Timer& failure_timer() { return failure_timer_; }

 private:
  bool required_;
  bool authenticated_ = false;
  bool by_certificate_ = false;
  bool checking_ = false;
  Stage stage_ = Stage::kNone;
  std::unique_ptr<sasl::ServerMechanism> mechanism_;
  std::string user_;
  std::uint64_t expires_at_ms_ = 0;
  net::Timer failure_timer_;
};

}  // namespace pp
