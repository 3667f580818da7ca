// host:port checks for the address keys. Syntax only, no resolution: config
// loading must not block on DNS, and a name that does not resolve yet (a
// Kafka broker that starts after the sidecar) is the upstream's to retry.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pp::config {

// nullopt when `text` is "host:port" or "[v6-literal]:port" with a port in
// 0-65535 (1-65535 unless allow_port_zero); otherwise what is wrong, in words.
std::optional<std::string> host_port_problem(std::string_view text, bool allow_port_zero);

}  // namespace pp::config
