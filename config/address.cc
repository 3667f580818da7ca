#include "config/address.h"

#include <charconv>

namespace pp::config {

std::optional<std::string> host_port_problem(std::string_view text, bool allow_port_zero) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return "an IPv6 literal needs a closing ']'";
    host = text.substr(1, close - 1);
    const auto rest = text.substr(close + 1);
    if (!rest.starts_with(':')) return "expected ':port' after ']'";
    port = rest.substr(1);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return "expected host:port";
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    // An unbracketed IPv6 literal is ambiguous ("::1:9092"): which colon ends the host?
    if (host.find(':') != std::string_view::npos) return "write an IPv6 address as [addr]:port";
  }
  if (host.empty()) return "the host is empty";
  for (const char c : host) {
    if (c == ' ' || c == '\t' || c == '/' || c == '[' || c == ']') return "the host has a bad character";
  }
  if (port.empty()) return "the port is empty";
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
    return "the port is not a number in 0-65535";
  }
  if (value == 0 && !allow_port_zero) return "port 0 is not a port a broker listens on";
  return std::nullopt;
}

}  // namespace pp::config
