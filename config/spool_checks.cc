#include "config/spool_checks.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pp::config {
namespace {

constexpr std::size_t kMaxTopicBytes = 249;

bool topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

Location where(const KeyFacts& facts, std::string_view key) {
  const auto it = facts.present.find(key);
  return it != facts.present.end() ? it->second : Location{facts.file_name, 1, 1};
}

}  // namespace

bool spool_ack_requested(const SpoolSettings& spool) {
  return spool.ack == SpoolAck::kSpool || std::any_of(spool.topic_ack.begin(), spool.topic_ack.end(),
                                                      [](const std::string& e) { return e.ends_with("=spool"); });
}

std::optional<std::string> spool_dir_problem(const std::string& dir) {
  if (dir.empty()) return std::nullopt;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path(dir);
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) return dir + " is not a directory";
    if (::access(dir.c_str(), W_OK | X_OK) != 0) return dir + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // Created at start: the nearest existing ancestor must let us.
  fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  while (!parent.empty() && !fs::exists(parent, ec)) {
    if (!parent.has_parent_path() || parent.parent_path() == parent) break;
    parent = parent.parent_path();
  }
  const std::string p = parent.empty() ? "." : parent.string();
  if (::access(p.c_str(), W_OK | X_OK) != 0) {
    return dir + " does not exist and cannot be created: " + p + ": " + std::strerror(errno);
  }
  return std::nullopt;
}

std::optional<std::string> topic_ack_problem(std::string_view entry) {
  const auto eq = entry.find('=');
  if (eq == std::string_view::npos) return "\"" + std::string(entry) + "\" is not NAME=MODE or PREFIX*=MODE";
  std::string_view name = entry.substr(0, eq);
  const std::string_view mode = entry.substr(eq + 1);
  if (name.ends_with('*')) name.remove_suffix(1);
  if (name.empty() && !entry.starts_with("*")) return "\"" + std::string(entry) + "\" names no topic";
  if (name.size() > kMaxTopicBytes || !std::all_of(name.begin(), name.end(), topic_char)) {
    return "\"" + std::string(entry) + "\": a topic name or prefix holds only a-z A-Z 0-9 . _ - (at most 249)";
  }
  if (!parse_enum<SpoolAck>(mode)) return "\"" + std::string(entry) + "\": the mode is upstream or spool";
  return std::nullopt;
}

SpoolAck spool_ack_for(const SpoolSettings& spool, std::string_view topic) {
  for (const std::string& entry : spool.topic_ack) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view name(entry.data(), eq);
    const bool prefix = name.ends_with('*');
    const std::string_view stem = prefix ? name.substr(0, name.size() - 1) : name;
    if (prefix ? topic.starts_with(stem) : topic == stem) {
      return parse_enum<SpoolAck>(std::string_view(entry).substr(eq + 1)).value_or(spool.ack);
    }
  }
  return spool.ack;
}

void check_spool(const Settings& s, const KeyFacts& facts, std::vector<ConfigError>& errors) {
  const SpoolSettings& spool = s.spool;
  if (spool_ack_requested(spool) && !spool.enabled() && !facts.bad.contains("spool.dir")) {
    const std::string_view key = spool.ack == SpoolAck::kSpool ? "spool.ack" : "spool.topic_ack";
    errors.push_back(
        ConfigError{where(facts, key), std::string(key) + " asks for ack = \"spool\", which needs spool.dir"});
  }
  if (spool.segment_bytes > spool.max_bytes && !facts.bad.contains("spool.max_bytes") &&
      !facts.bad.contains("spool.segment_bytes")) {
    errors.push_back(ConfigError{where(facts, "spool.segment_bytes"),
                                 "spool.segment_bytes = " + std::to_string(spool.segment_bytes) +
                                     " is larger than spool.max_bytes = " + std::to_string(spool.max_bytes)});
  }
}

}  // namespace pp::config
