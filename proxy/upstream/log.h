// The upstream layer's logger. It is a clone of spdlog's default logger made
// the first time it is used, so the daemon's choice of sinks and format
// (docs/design/INTERFACES.md [log]) applies here too, and tests can add a sink to it to
// check what was said.
#pragma once

#include <spdlog/spdlog.h>

namespace pp::upstream {

spdlog::logger& log();

}  // namespace pp::upstream
