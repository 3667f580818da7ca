// The front end's logger: a clone of spdlog's default logger made on first
// use, so the daemon's sinks and format apply, and tests can attach a sink to
// check what was said about a client.
#pragma once

#include <spdlog/spdlog.h>

namespace pp::frontend {

spdlog::logger& log();

}  // namespace pp::frontend
