// What one client connection may do under the [[listener.principals]]
// entries (docs/design/INTERFACES.md, "Configuration (TOML)"): WRITE and
// DESCRIBE on which topics, IDEMPOTENT_WRITE (InitProducerId), and its
// produce byte-rate quota, with Kafka's operations. AccessRules resolves a
// principal to one; a value type, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace pp
