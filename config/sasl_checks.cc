#include "config/sasl_checks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pp::config {

std::optional<std::string> sasl_value_problem(Check check, const std::string& value) {
  switch (check) {
    case Check::kSaslMechanism:
      if (value.empty() || value == "PLAIN" || value == "SCRAM-SHA-256" || value == "SCRAM-SHA-512" ||
          value == "OAUTHBEARER") {
        return std::nullopt;
      }
      return std::string("not one of \"\" (off), PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER");
    case Check::kReadableFile: {
      if (value.empty()) return std::nullopt;
      struct stat st {};
      if (::stat(value.c_str(), &st) != 0) return std::string("cannot be read: ") + std::strerror(errno);
      if (S_ISDIR(st.st_mode)) return std::string("is a directory, not a file");
      if (::access(value.c_str(), R_OK) != 0) return std::string("cannot be read: ") + std::strerror(errno);
      return std::nullopt;
    }
    case Check::kEnvironmentName: {
      const bool name_chars = std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      });
      if (name_chars && (value.empty() || !(value[0] >= '0' && value[0] <= '9'))) return std::nullopt;
      return std::string("not an environment variable name (letters, digits and _, not starting with a digit)");
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::string> command_problem(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  if (std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a.empty(); })) {
    return std::string("has an empty argument (it runs without a shell: one array element per argument)");
  }
  return std::nullopt;
}

std::optional<std::string> mechanisms_problem(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if (n != "PLAIN" && n != "SCRAM-SHA-256" && n != "SCRAM-SHA-512") {
      return "has \"" + n + "\", not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512";
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), n) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "names " + n + " twice";
    }
  }
  return std::nullopt;
}

}  // namespace pp::config
