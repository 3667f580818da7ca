// Internal to pp_config: the per-key checks of [upstream.sasl] and [listener.sasl]. Paths and
// variable names are shown in messages; what the files hold never is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/schema.h"

namespace pp::config {

// The problem with a string value under `check`, or nullopt.
std::optional<std::string> sasl_value_problem(Check check, const std::string& value);
// token_command: empty, or a program name first and no empty argument.
std::optional<std::string> command_problem(const std::vector<std::string>& argv);
// listener.sasl.mechanisms: each one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, once.
std::optional<std::string> mechanisms_problem(const std::vector<std::string>& names);

}  // namespace pp::config
