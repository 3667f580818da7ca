#include "proxy/upstream/sasl/authenticator.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "proxy/upstream/sasl/oauthbearer.h"
#include "proxy/upstream/sasl/plain.h"
#include "proxy/upstream/sasl/scram.h"

namespace pp::upstream::sasl {

bool known_mechanism(std::string_view name) {
  return name == "PLAIN" || name == "SCRAM-SHA-256" || name == "SCRAM-SHA-512" || name == "OAUTHBEARER";
}

std::string strip_one_newline(std::string text) {
  if (text.ends_with("\r\n")) {
    text.resize(text.size() - 2);
  } else if (text.ends_with('\n')) {
    text.pop_back();
  }
  return text;
}

Authenticator::Authenticator(SaslConfig config) : config_(std::move(config)) {}

std::expected<std::shared_ptr<Authenticator>, std::string> Authenticator::create(SaslConfig config) {
  if (!known_mechanism(config.mechanism)) {
    return std::unexpected("upstream.sasl.mechanism \"" + config.mechanism +
                           "\" is not one of PLAIN, SCRAM-SHA-256, "
                           "SCRAM-SHA-512, OAUTHBEARER");
  }
  std::shared_ptr<Authenticator> a(new Authenticator(std::move(config)));
  if (a->config_.mechanism == "OAUTHBEARER") {
    if (a->config_.token_file.empty() == a->config_.token_command.empty()) {
      return std::unexpected(std::string("OAUTHBEARER needs exactly one of upstream.sasl.token_file, token_command"));
    }
    a->tokens_.emplace(
        TokenSourceConfig{a->config_.token_file, a->config_.token_command, a->config_.token_lifetime_ms, 10000});
    return a;
  }
  if (a->config_.username.empty()) return std::unexpected(a->config_.mechanism + " needs upstream.sasl.username");
  auto password = a->read_password();
  if (!password) return std::unexpected(password.error());
  a->password_ = std::move(*password);
  return a;
}

std::expected<std::string, std::string> Authenticator::read_password() const {
  if (config_.password_file.empty() == config_.password_env.empty()) {
    return std::unexpected(config_.mechanism + " needs exactly one of upstream.sasl.password_file, password_env");
  }
  if (!config_.password_env.empty()) {
    const char* value = std::getenv(config_.password_env.c_str());
    if (value == nullptr || *value == '\0') {
      return std::unexpected("upstream.sasl.password_env: the environment variable " + config_.password_env +
                             " is not set or empty");
    }
    return std::string(value);
  }
  std::ifstream in(config_.password_file, std::ios::binary);
  if (!in) {
    return std::unexpected("upstream.sasl.password_file " + config_.password_file +
                           " cannot be read: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string password = strip_one_newline(text.str());
  if (password.empty()) return std::unexpected("upstream.sasl.password_file " + config_.password_file + " is empty");
  return password;
}

std::expected<void, std::string> Authenticator::reload() {
  if (tokens_) {
    tokens_->invalidate();
    return {};
  }
  auto password = read_password();
  if (!password) return std::unexpected(password.error());
  password_ = std::move(*password);
  return {};
}

std::expected<std::unique_ptr<SaslMechanism>, SaslError> Authenticator::begin(std::int64_t now_unix_ms) {
  const std::string& m = config_.mechanism;
  if (m == "PLAIN") return std::make_unique<PlainMechanism>(config_.username, password_);
  if (m == "SCRAM-SHA-256") return std::make_unique<ScramMechanism>(ScramHash::kSha256, config_.username, password_);
  if (m == "SCRAM-SHA-512") return std::make_unique<ScramMechanism>(ScramHash::kSha512, config_.username, password_);
  auto token = tokens_->token(now_unix_ms);
  if (!token) return std::unexpected(token.error());
  return std::make_unique<OAuthBearerMechanism>(std::move(*token));
}

}  // namespace pp::upstream::sasl
