// Where an OAUTHBEARER token comes from: a file the operator's token helper
// keeps fresh (re-read when its modification time changes), or a command run
// without a shell whose stdout is the token. A token is cached until it
// expires: its JWT "exp" claim when it is a JWT, else token_lifetime_ms after
// it was obtained. A file that disappears or turns empty keeps the last good
// token until that expires; only then does authentication fail.
//
// The command is not run here: when command_due() says a fresh token is
// needed, the broker connection runs it off the loop's critical path
// (net::ChildProcess: uv_spawn, bounded by command_timeout_ms, then killed)
// and hands its outcome to command_finished(). Other connections and
// clients are served meanwhile. Pure bookkeeping, so it is unit-tested
// without processes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "proxy/upstream/sasl/mechanism.h"

namespace pp::upstream::sasl {

struct TokenSourceConfig {
  std::string token_file;                  // one of these two
  std::vector<std::string> token_command;  // argv, argv[0] looked up in PATH
  std::int64_t token_lifetime_ms = 3600000;
  int command_timeout_ms = 10000;
};

// The JWT "exp" claim (seconds since the epoch) of a token shaped
// header.payload.signature, or nullopt if it is not one.
std::optional<std::int64_t> jwt_expiry_seconds(std::string_view token);

class TokenSource {
 public:
  explicit TokenSource(TokenSourceConfig config) : config_(std::move(config)) {}

  // A token valid at now_unix_ms (wall clock), from the cache when it still
  // is. With a token_command, only the cache: run the command first when
  // command_due().
  std::expected<std::string, SaslError> token(std::int64_t now_unix_ms);
  // A token_command source whose cached token is missing, expiring, or
  // asked to be refreshed (SIGHUP).
  bool command_due(std::int64_t now_unix_ms) const {
    return !config_.token_command.empty() && (refresh_ || !cached_valid(now_unix_ms));
  }
  const std::vector<std::string>& command() const { return config_.token_command; }
  int command_timeout_ms() const { return config_.command_timeout_ms; }
  // The command's stdout, or why it failed (exit status, signal, timeout);
  // success when a valid token is cached afterwards. A failed run keeps a
  // still-valid earlier token. Errors name argv[0], never the output.
  std::expected<void, SaslError> command_finished(std::expected<std::string, std::string> output,
                                                  std::int64_t now_unix_ms);
  // SIGHUP: the next token() reads the file or runs the command afresh.
  void invalidate() {
    file_mtime_ns_.reset();
    refresh_ = true;
  }

 private:
  std::expected<std::string, SaslError> from_file(std::int64_t now_unix_ms);
  std::expected<std::string, SaslError> from_command(std::int64_t now_unix_ms);
  void remember(std::string token, std::int64_t now_unix_ms);
  bool cached_valid(std::int64_t now_unix_ms) const { return cached_ && now_unix_ms < expires_unix_ms_; }

  TokenSourceConfig config_;
  std::optional<std::string> cached_;
  std::int64_t obtained_unix_ms_ = 0;
  std::int64_t expires_unix_ms_ = 0;
  std::optional<std::int64_t> file_mtime_ns_;
  bool refresh_ = false;
};

// The most a token_command may print.
inline constexpr std::size_t kMaxTokenCommandOutput = 64 * 1024;

}  // namespace pp::upstream::sasl
