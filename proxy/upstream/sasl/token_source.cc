#include "proxy/upstream/sasl/token_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "proxy/sasl/base64.h"

namespace pp::upstream::sasl {
namespace {

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

// A token that expires within this much of now is treated as expired, so it
// is not sent only to lapse on the broker before the exchange ends.
std::int64_t expiry_margin_ms(std::int64_t lifetime_ms) {
  return std::min<std::int64_t>(30000, lifetime_ms / 10);
}

}  // namespace

std::optional<std::int64_t> jwt_expiry_seconds(std::string_view token) {
  const auto dot1 = token.find('.');
  if (dot1 == std::string_view::npos) return std::nullopt;
  const auto dot2 = token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;
  const auto payload = ::pp::sasl::base64url_decode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  if (!payload) return std::nullopt;
  // Not a JSON parser: the first "exp" key followed by ':' and an integer
  // (RFC 7519 NumericDate; a fraction is cut off).
  const std::string_view json = as_text(*payload);
  const auto key = json.find("\"exp\"");
  if (key == std::string_view::npos) return std::nullopt;
  std::size_t at = json.find_first_not_of(" \t\r\n", key + 5);
  if (at == std::string_view::npos || json[at] != ':') return std::nullopt;
  at = json.find_first_not_of(" \t\r\n", at + 1);
  if (at == std::string_view::npos) return std::nullopt;
  std::int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(json.data() + at, json.data() + json.size(), seconds);
  if (ec != std::errc() || end == json.data() + at) return std::nullopt;
  return seconds;
}

void TokenSource::remember(std::string token, std::int64_t now_unix_ms) {
  const auto exp = jwt_expiry_seconds(token);
  obtained_unix_ms_ = now_unix_ms;
  const std::int64_t expires = exp ? *exp * 1000 : now_unix_ms + config_.token_lifetime_ms;
  expires_unix_ms_ = expires - expiry_margin_ms(expires - now_unix_ms);
  cached_ = std::move(token);
  refresh_ = false;
}

std::expected<std::string, SaslError> TokenSource::token(std::int64_t now_unix_ms) {
  return config_.token_file.empty() ? from_command(now_unix_ms) : from_file(now_unix_ms);
}

std::expected<std::string, SaslError> TokenSource::from_file(std::int64_t now_unix_ms) {
  const std::string& path = config_.token_file;
  auto keep_or_fail = [&](const std::string& why) -> std::expected<std::string, SaslError> {
    if (cached_valid(now_unix_ms)) return *cached_;  // the last good token, until it expires
    return std::unexpected(SaslError{"OAUTHBEARER: token file " + path + ": " + why +
                                     (cached_ ? ", and the last token read from it has expired" : "")});
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return keep_or_fail(std::strerror(errno));
  const std::int64_t mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (file_mtime_ns_ && *file_mtime_ns_ == mtime_ns && cached_valid(now_unix_ms)) return *cached_;
  std::ifstream in(path, std::ios::binary);
  if (!in) return keep_or_fail("cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = trimmed(text.str());
  if (token.empty()) return keep_or_fail("is empty");
  file_mtime_ns_ = mtime_ns;
  remember(token, now_unix_ms);
  if (!cached_valid(now_unix_ms))
    return std::unexpected(SaslError{"OAUTHBEARER: the token in " + path + " has expired"});
  return token;
}

std::expected<std::string, SaslError> TokenSource::from_command(std::int64_t now_unix_ms) {
  if (cached_valid(now_unix_ms)) return *cached_;
  return std::unexpected(
      SaslError{"OAUTHBEARER: token_command " + config_.token_command.front() + " has not given a token yet"});
}

std::expected<void, SaslError> TokenSource::command_finished(std::expected<std::string, std::string> output,
                                                             std::int64_t now_unix_ms) {
  const std::string who = "OAUTHBEARER: token_command " + config_.token_command.front() + " ";
  if (!output) {
    if (!cached_valid(now_unix_ms)) return std::unexpected(SaslError{who + output.error()});
    refresh_ = false;  // the last good token until it expires; asked again then
    return {};
  }
  std::string token = trimmed(*output);
  if (token.empty()) return std::unexpected(SaslError{who + "printed no token"});
  remember(token, now_unix_ms);
  if (!cached_valid(now_unix_ms)) return std::unexpected(SaslError{who + "printed an expired token"});
  return {};
}

}  // namespace pp::upstream::sasl
