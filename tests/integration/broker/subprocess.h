// Running an external tool (kcat, python3) with a hard time bound and
// collecting its stdout, for tests that check the test cluster against
// independent Kafka clients.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace pp::test_broker::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// Runs `argv` under coreutils' timeout(1), so a hung tool can't hang the test.
inline CommandResult run_command(const std::vector<std::string>& argv, int timeout_seconds,
                                 bool stderr_to_null = false) {
  std::string cmd = "timeout -k 2 " + std::to_string(timeout_seconds);
  for (const auto& a : argv) cmd += " " + shell_quote(a);
  if (stderr_to_null) cmd += " 2>/dev/null";
  CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return result;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace pp::test_broker::testing
