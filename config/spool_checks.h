// Internal to pp_config, and the per-topic rule the daemon applies: the
// checks of [spool] (docs/design/SPOOL.md, "Configuration"). The directory
// is checked where it will be used, so `--check-config` and start-up name an
// unwritable one with its path and the system's reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/combinations.h"
#include "config/settings.h"

namespace pp::config {

// spool.dir: empty (off), or an existing directory this process may write
// and enter, or a path whose nearest existing ancestor it may write (the
// directory is created at start). The problem names the path and errno's text.
std::optional<std::string> spool_dir_problem(const std::string& dir);

// One spool.topic_ack entry: "NAME=MODE" or "PREFIX*=MODE", NAME/PREFIX made
// of Kafka's topic characters [a-zA-Z0-9._-] (at most 249), MODE upstream or spool.
std::optional<std::string> topic_ack_problem(std::string_view entry);

// The ack mode of `topic`: the first topic_ack entry naming it exactly or
// by prefix, else spool.ack. Entries are assumed valid (topic_ack_problem).
SpoolAck spool_ack_for(const SpoolSettings& spool, std::string_view topic);

// Whether ack = "spool" is asked for, by spool.ack or any topic's override.
bool spool_ack_requested(const SpoolSettings& spool);

// Rules across [spool]'s keys: ack = "spool" (or any topic's) needs a
// directory; a segment is not larger than the whole spool. (That this build
// does not serve ack = "spool" yet is the daemon's to say: daemon/cli.h.)
void check_spool(const Settings& s, const KeyFacts& facts, std::vector<ConfigError>& errors);

}  // namespace pp::config
