// Authorization by principal: the [[listener.principals]] entries
// (docs/design/INTERFACES.md, "Configuration (TOML)") as a rule set that
// resolves a connection's principal to its Access. The rules are an
// allow-list per name, with Kafka's operations and error codes.
//
// Without rules every connection may do everything (the sidecar's behaviour).
// With rules, a principal is granted only what its entry lists and a name
// with no entry gets nothing (deny by default), with one exception: an
// unauthenticated loopback connection (the sidecar's own clients) is not
// restricted unless a rule names ANONYMOUS. Immutable once built; any
// thread.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "proxy/frontend/access.h"
#include "proxy/frontend/principal.h"

namespace pp {

// Whether a peer name as the listener gives it ("127.0.0.1:5555",
// "[::1]:5555") is a loopback address: 127.0.0.0/8, ::1, or an IPv4-mapped
// 127.0.0.0/8.
bool peer_is_loopback(std::string_view peer_name);

class AccessRules {
 public:
  AccessRules() = default;
  // Names are unique (the config checks it); the first entry of a name wins.
  explicit AccessRules(std::vector<PrincipalGrant> grants) : grants_(std::move(grants)) {}
  // Shares grants_ by address (Access points into it): not copied or moved
  // once Access values were handed out.
  AccessRules(const AccessRules&) = delete;
  AccessRules& operator=(const AccessRules&) = delete;

  // `loopback`: the connection came from a loopback address.
  Access resolve(const Principal& principal, bool loopback) const;
  bool empty() const { return grants_.empty(); }
  const std::vector<PrincipalGrant>& grants() const { return grants_; }

 private:
  const PrincipalGrant* find(std::string_view name) const;

  std::vector<PrincipalGrant> grants_;
};

}  // namespace pp
