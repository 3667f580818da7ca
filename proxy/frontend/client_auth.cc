#include "proxy/frontend/client_auth.h"

namespace pp {

void ClientAuth::begin(std::unique_ptr<sasl::ServerMechanism> mechanism, bool raw_tokens) {
  mechanism_ = std::move(mechanism);
  stage_ = raw_tokens ? Stage::kRawTokens : Stage::kAuthenticate;
}

void ClientAuth::complete(const std::string& user, std::uint64_t now_ms, std::int64_t lifetime_ms) {
  authenticated_ = true;
  user_ = user;
  stage_ = Stage::kNone;
  mechanism_.reset();
  expires_at_ms_ = lifetime_ms > 0 ? now_ms + static_cast<std::uint64_t>(lifetime_ms) : 0;
}

void ClientAuth::fail() {
  stage_ = Stage::kFailed;
  checking_ = false;
  mechanism_.reset();
}

}  // namespace pp
