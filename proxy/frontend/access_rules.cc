#include "proxy/frontend/access_rules.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace pp {

bool peer_is_loopback(std::string_view peer_name) {
  std::string_view host = peer_name;
  if (host.starts_with('[')) {
    host = host.substr(1, host.find(']') == std::string_view::npos ? host.size() - 1 : host.find(']') - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  const std::string text(host);
  std::array<unsigned char, sizeof(in6_addr)> bytes{};
  if (inet_pton(AF_INET, text.c_str(), bytes.data()) == 1) return bytes[0] == 127;
  if (inet_pton(AF_INET6, text.c_str(), bytes.data()) != 1) return false;
  if (std::memcmp(bytes.data(), &in6addr_loopback, sizeof(in6_addr)) == 0) return true;
  static constexpr std::array<unsigned char, 12> kV4Mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(bytes.data(), kV4Mapped.data(), kV4Mapped.size()) == 0 && bytes[12] == 127;
}

const PrincipalGrant* AccessRules::find(std::string_view name) const {
  const auto it =
      std::find_if(grants_.begin(), grants_.end(), [name](const PrincipalGrant& g) { return g.name == name; });
  return it == grants_.end() ? nullptr : &*it;
}

Access AccessRules::resolve(const Principal& principal, bool loopback) const {
  if (grants_.empty()) return Access::unrestricted();
  if (const PrincipalGrant* grant = find(principal.name()); grant != nullptr) {
    // A certificate or SASL user literally named ANONYMOUS is not the
    // unauthenticated client the ANONYMOUS rule is for.
    if (principal.is_anonymous() || principal.name() != Principal::kAnonymousName) return Access::granted(*grant);
    return Access::denied();
  }
  if (principal.is_anonymous() && loopback) return Access::unrestricted();
  return Access::denied();
}

}  // namespace pp
