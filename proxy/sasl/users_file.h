// The client listener's users file (docs/design/INTERFACES.md, "Users
// file"): TOML, one table per user, one inline table per mechanism, salted
// verifiers only, never a password:
//
//   [users."alice"]
//   PLAIN = { salt = "<base64>", iterations = 4096, hash = "<base64>" }
//   SCRAM-SHA-256 = { salt = "<base64>", iterations = 4096,
//                     stored_key = "<base64>", server_key = "<base64>" }
//   SCRAM-SHA-512 = { ... as SCRAM-SHA-256 ... }
//
// Parsing is strict: an unknown key, a wrong type, bad base64, a key of the
// wrong length for its hash or an iteration count outside [4096, 1000000]
// refuses the whole file with a message naming the user and key (never a
// value). `produce-proxy users add` writes it; the daemon reads it at start
// and on SIGHUP (a file that fails keeps the users loaded before).
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "proxy/sasl/user_credentials.h"

namespace pp::sasl {

// `source` names the file in messages.
std::expected<UserStore, std::string> parse_users_file(std::string_view text, std::string_view source);
// The text parse_users_file reads back to `users`, users in name order.
std::string format_users_file(const UserStore& users);

// Reads and parses `path`.
std::expected<UserStore, std::string> load_users_file(const std::string& path);
// Writes `users` to `path` atomically: a temporary file in the same
// directory, mode 0600, fsynced, renamed over `path`.
std::expected<void, std::string> write_users_file(const std::string& path, const UserStore& users);

}  // namespace pp::sasl
