// Authorization by principal: the [[listener.principals]] entries
// (docs/design/INTERFACES.md, "Configuration (TOML)"): which topics a principal may WRITE and DESCRIBE, whether it
// has IDEMPOTENT_WRITE (InitProducerId), and its produce byte-rate quota.
// Kafka's operations and error codes; the rules are an allow-list per name.
//
// Without rules every connection may do everything (the sidecar's behaviour).
// With rules, a principal is granted only what its entry lists and a name
// with no entry gets nothing (deny by default), with one exception: an
// unauthenticated loopback connection (the sidecar's own clients) is not
// restricted unless a rule names ANONYMOUS. Immutable once built; any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/frontend/principal.h"

namespace pp {

// One [[listener.principals]] entry.
struct PrincipalGrant {
  std::string name;
  // Topic names, or prefixes ending in '*' ("logs-*"; "*" alone: every topic).
  std::vector<std::string> topics;
  // IDEMPOTENT_WRITE: as Kafka since KIP-679, WRITE on any topic implies it;
  // false withdraws it from a principal that has topics.
  bool idempotent_write = true;
  // Produce bytes per second over the quota window (ProduceQuota); 0: none.
  std::uint64_t produce_bytes_per_second = 0;
  bool operator==(const PrincipalGrant&) const = default;
};

// Whether `topic` matches `pattern`: equal, or `pattern` ends in '*' and
// the topic starts with what precedes it.
bool topic_matches(std::string_view pattern, std::string_view topic);

// Whether a peer name as the listener gives it ("127.0.0.1:5555",
// "[::1]:5555") is a loopback address: 127.0.0.0/8, ::1, or an IPv4-mapped
// 127.0.0.0/8.
bool peer_is_loopback(std::string_view peer_name);

// What one connection may do, resolved from its principal by AccessRules.
// Points into the AccessRules it came from, which must outlive it.
class Access {
 public:
  // No rules apply: everything allowed, no quota.
  static Access unrestricted() { return Access(Kind::kUnrestricted, nullptr); }
  // Rules exist and none names this principal.
  static Access denied() { return Access(Kind::kDenied, nullptr); }
  static Access granted(const PrincipalGrant& grant) { return Access(Kind::kGranted, &grant); }

  // WRITE on the topic (Produce).
  bool may_write(std::string_view topic) const;
  // DESCRIBE on the topic (Metadata): implied by WRITE, as in Kafka.
  bool may_describe(std::string_view topic) const { return may_write(topic); }
  // IDEMPOTENT_WRITE on the cluster (InitProducerId without transactional_id).
  bool may_idempotent_write() const;
  // 0: no quota.
  std::uint64_t produce_bytes_per_second() const { return grant_ ? grant_->produce_bytes_per_second : 0; }
  bool is_unrestricted() const { return kind_ == Kind::kUnrestricted; }

 private:
  enum class Kind : std::uint8_t { kUnrestricted, kDenied, kGranted };
  Access(Kind kind, const PrincipalGrant* grant) : kind_(kind), grant_(grant) {}

  Kind kind_;
  const PrincipalGrant* grant_;
};

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
