// Who may produce through the client listener: the "no open relay" rule.
// The proxy produces upstream under its own identity (its credentials and
// ACLs), so whoever can reach the listener acts with that identity. A
// listener on loopback limits that to this host's processes; one beyond it
// must authenticate its clients, or the operator must state that something
// else (a firewall, a network policy) limits who reaches it:
// listener.allow_unauthenticated = true. Validation (combinations.cc)
// refuses the rest; the daemon warns at start when it was allowed.
#pragma once

#include <string_view>

#include "config/settings.h"

namespace pp::config {

// True when `host_port` (host:port or [v6-literal]:port, as
// host_port_problem accepts) names a host only this machine reaches:
// "localhost" (any case), an IPv4 literal in 127.0.0.0/8, or the IPv6
// literal ::1. Everything else is not loopback: the wildcards 0.0.0.0 and ::,
// every other address, and every other host name (it may resolve anywhere).
bool is_loopback_address(std::string_view host_port);

// True when the client listener authenticates every client before it may
// produce: [listener.tls] enabled with client_auth = "required" (every
// client presents a certificate that chains to listener.tls.ca_file). The
// open-relay rule is then met without listener.allow_unauthenticated.
// client_auth = "requested" does not count: a client without a certificate
// still gets in. [listener.sasl] with mechanisms counts too: a client that
// has not authenticated is served nothing but ApiVersions, SaslHandshake
// and SaslAuthenticate.
bool clients_authenticated(const ListenerSettings& listener);

// True when a client the proxy cannot identify may reach the listener from
// beyond this host: listener.address is not loopback and clients are not
// authenticated. listener.allow_unauthenticated is not consulted: it decides
// whether this is allowed, not whether it is the case.
bool serves_unauthenticated_beyond_loopback(const ListenerSettings& listener);

}  // namespace pp::config
