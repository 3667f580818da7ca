// The SASL login conversation of one broker connection, after ApiVersions:
// SaslHandshake v1 (KIP-43) naming the mechanism, then SaslAuthenticate
// (KIP-152) until the mechanism is done; for OAUTHBEARER with a
// token_command, the command first. Once logged in with a session lifetime
// from the broker (KIP-368), it plans the re-authentication at 0.85 to 0.95
// of it, as Java's client does.
//
// The mechanism logic is the Authenticator's (proxy/upstream/sasl/); this
// type runs its exchange over the connection and reports one outcome per
// login: succeeded, or failed with the metric reason of
// upstream_auth_failures_total and a message for the log. No secret reaches
// a message: the mechanisms' errors never hold one, and auth_bytes are never
// logged.
//
// Owned by its BrokerConnection, which it reaches only through the
// Connection interface. Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "proxy/net/child_process.h"
#include "proxy/net/timer.h"
#include "proxy/protocol/messages/sasl_authenticate.h"
#include "proxy/protocol/messages/sasl_handshake.h"
#include "proxy/upstream/api_versions_negotiation.h"
#include "proxy/upstream/response_sink.h"
#include "proxy/upstream/sasl/authenticator.h"

namespace pp::upstream {

class SaslLogin {
 public:
  // What the login needs of its connection. Every call comes from the loop,
  // inside a call into SaslLogin or one of its callbacks.
  class Connection {
   public:
    // Sends a login request now, on the current session, ahead of any
    // Produce (the connection is authenticating, nothing else goes). The
    // sink hears nothing if the session closes first.
    virtual void send_login(const SaslHandshakeRequest& request, std::unique_ptr<ResponseSink> sink) = 0;
    virtual void send_login(const SaslAuthenticateRequest& request, std::int16_t version,
                            std::unique_ptr<ResponseSink> sink) = 0;
    // The login that begin() started is done. `reauth`: it was a
    // re-authentication of a session already up.
    virtual void login_succeeded(bool reauth) = 0;
    // It failed: the connection counts `metric_reason` and closes with `why`.
    virtual void login_failed(std::string_view metric_reason, const std::string& why) = 0;
    // The session lifetime is nearly over: re-authenticate once idle.
    virtual void reauthentication_due() = 0;

    virtual ~Connection() = default;
  };

  // `authenticator` may be null (no SASL): begin() must not be called then.
  // `peer` names the broker in log lines; `versions` are the connection's
  // negotiated ones, read at each begin().
  SaslLogin(uv_loop_t* loop, std::shared_ptr<sasl::Authenticator> authenticator, std::string peer,
            const NegotiatedVersions& versions, Connection& connection);
  ~SaslLogin();
  SaslLogin(const SaslLogin&) = delete;
  SaslLogin& operator=(const SaslLogin&) = delete;

  // Starts a login on the session just negotiated (`reauth` false) or on a
  // session up for a while whose lifetime is nearly over (true). Ends with
  // exactly one of login_succeeded or login_failed, possibly inside this
  // call, unless reset() comes first.
  void begin(bool reauth);
  // The session closed: any exchange and any planned re-authentication end,
  // and their late callbacks are ignored.
  void reset();

  // A re-authentication is due (no new Produce until it has run).
  bool reauthentication_pending() const { return due_; }
  // KIP-368: a re-authentication is due or running.
  bool reauthenticating() const { return due_ || (running_ && reauth_); }
  std::uint64_t reauthentications() const { return reauthentications_; }

 private:
  void run_token_command();
  void on_token_command(std::uint64_t exchange, std::expected<std::string, std::string> output);
  void send_handshake();
  void on_handshake(std::uint64_t exchange, std::expected<SaslHandshakeResponse, ErrorCode> result);
  void send_authenticate(Bytes auth_bytes);
  void on_authenticate(std::uint64_t exchange, std::expected<SaslAuthenticateResponse, ErrorCode> result);
  void succeeded(std::int64_t session_lifetime_ms);
  void failed(std::string_view metric_reason, const std::string& why);
  void schedule_reauthentication(std::int64_t session_lifetime_ms);
  // Callbacks of exchange `exchange` still apply.
  bool current(std::uint64_t exchange) const { return running_ && exchange == exchange_; }

  uv_loop_t* loop_;
  std::shared_ptr<sasl::Authenticator> authenticator_;
  std::string peer_;
  const NegotiatedVersions& versions_;
  Connection& connection_;
  // Lets callbacks posted to the loop find out whether we still exist.
  std::shared_ptr<SaslLogin*> self_;

  std::uint64_t exchange_ = 0;  // bumped at every begin() and reset()
  bool running_ = false;        // begin() called, no outcome yet
  bool reauth_ = false;         // the login running is a re-authentication
  bool due_ = false;
  std::unique_ptr<sasl::SaslMechanism> mechanism_;  // during an exchange only
  net::ChildProcess token_command_;                 // OAUTHBEARER's token_command, while it runs
  net::Timer reauth_timer_;
  std::uint64_t reauthentications_ = 0;
};

}  // namespace pp::upstream
