// The test cluster's logger: spdlog to stderr, so the binary's stdout stays
// the control channel (bootstrap line, command replies).
#pragma once

#include <spdlog/spdlog.h>

#include <memory>

namespace pp::test_broker {

spdlog::logger& log();

}  // namespace pp::test_broker
