// The SASL credentials every broker connection authenticates with, shared
// by all of them (one per Upstream): which mechanism, the username, the
// password (read once from its file or environment variable, and again on
// SIGHUP) or the OAUTHBEARER token source. begin() makes a fresh mechanism
// object per exchange. Nothing here logs, and no error text holds a secret.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/upstream/sasl/mechanism.h"
#include "proxy/upstream/sasl/token_source.h"

namespace pp::upstream::sasl {

// upstream.sasl as the daemon maps it (docs/design/INTERFACES.md).
struct SaslConfig {
  std::string mechanism;  // "" = off, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
  std::string username;
  std::string password_file;
  std::string password_env;
  std::string token_file;
  std::vector<std::string> token_command;
  std::int64_t token_lifetime_ms = 3600000;
};

// The mechanisms begin() can run, as Kafka names them.
bool known_mechanism(std::string_view name);

class Authenticator {
 public:
  // Checks the combination and reads the password; the error names the key
  // or file at fault.
  static std::expected<std::shared_ptr<Authenticator>, std::string> create(SaslConfig config);

  const std::string& mechanism() const { return config_.mechanism; }
  // A new exchange with the current credentials; now_unix_ms for token expiry.
  std::expected<std::unique_ptr<SaslMechanism>, SaslError> begin(std::int64_t now_unix_ms);
  // OAUTHBEARER with a token_command: the command must give a token before
  // begin() can (the connection runs it, see token_source.h).
  bool token_command_due(std::int64_t now_unix_ms) const { return tokens_ && tokens_->command_due(now_unix_ms); }
  const std::vector<std::string>& token_command() const { return config_.token_command; }
  int token_command_timeout_ms() const { return tokens_ ? tokens_->command_timeout_ms() : 0; }
  std::expected<void, SaslError> token_command_finished(std::expected<std::string, std::string> output,
                                                        std::int64_t now_unix_ms) {
    return tokens_->command_finished(std::move(output), now_unix_ms);
  }
  // SIGHUP: re-read the password; the next token is read or fetched afresh.
  // On an error the previous password stays in use.
  std::expected<void, std::string> reload();

 private:
  explicit Authenticator(SaslConfig config);
  std::expected<std::string, std::string> read_password() const;

  SaslConfig config_;
  std::string password_;
  std::optional<TokenSource> tokens_;
};

// A password file's contents with one trailing newline removed (editors and
// `echo` add one; Kubernetes Secrets and LoadCredential= files may not).
std::string strip_one_newline(std::string text);

}  // namespace pp::upstream::sasl
