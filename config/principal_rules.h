// Internal to pp_config: [[listener.principals]], the per-principal topic
// rules and quotas (frontend/access_rules.h). An array of tables, so it is
// read here rather than through the key schema (config/schema.h), which
// describes one value per key; its keys are listed in INTERFACES.md all the
// same, and a change needs a restart (diff.cc reports it so).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/document.h"

namespace pp::config {

// Each entry's keys, in INTERFACES.md's order.
inline constexpr std::string_view kPrincipalRuleKeys[] = {"name", "topics", "idempotent_write",
                                                          "produce_bytes_per_second"};

// The entries of listener.principals in file order, every problem appended
// to `errors` at the offending value (an entry with a problem is left out).
std::vector<ListenerSettings::PrincipalRule> read_principal_rules(const Document& doc,
                                                                  std::vector<ConfigError>& errors);

// Why `pattern` is not a topic name or prefix: empty, a '*' before the end,
// or a character Kafka does not allow in topic names (ASCII letters, digits,
// '.', '_', '-'), or longer than Kafka's 249. nullopt when it is fine.
std::optional<std::string> topic_pattern_problem(std::string_view pattern);

}  // namespace pp::config
