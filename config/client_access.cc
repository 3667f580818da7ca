#include "config/client_access.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>

namespace pp::config {
namespace {

// The host part: inside the brackets of "[v6]:port", else before the last ':'.
std::string_view host_of(std::string_view host_port) {
  if (host_port.starts_with('[')) {
    const auto close = host_port.find(']');
    return close == std::string_view::npos ? host_port.substr(1) : host_port.substr(1, close - 1);
  }
  const auto colon = host_port.rfind(':');
  return colon == std::string_view::npos ? host_port : host_port.substr(0, colon);
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

}  // namespace

bool is_loopback_address(std::string_view host_port) {
  const std::string host(host_of(host_port));
  if (equals_ignoring_case(host, "localhost")) return true;
  // inet_pton, as the listener's bind (uv_ip4_addr, uv_ip6_addr) reads them:
  // dotted quads only, no "127.1" shorthand.
  std::array<unsigned char, sizeof(in6_addr)> bytes{};
  if (inet_pton(AF_INET, host.c_str(), bytes.data()) == 1) return bytes[0] == 127;
  if (inet_pton(AF_INET6, host.c_str(), bytes.data()) == 1) {
    return std::memcmp(bytes.data(), &in6addr_loopback, sizeof(in6_addr)) == 0;
  }
  return false;
}

bool clients_authenticated(const ListenerSettings& listener) {
  return (listener.tls.enabled && listener.tls.client_auth == ClientAuth::kRequired) || listener.sasl.enabled();
}

bool serves_unauthenticated_beyond_loopback(const ListenerSettings& listener) {
  return !is_loopback_address(listener.address) && !clients_authenticated(listener);
}

}  // namespace pp::config
