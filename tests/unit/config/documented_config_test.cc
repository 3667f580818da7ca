// The documents agree with the schema: the annotated example config and the
// config block of docs/design/INTERFACES.md both load cleanly, name every key, and show
// exactly the defaults (bootstrap_servers, which has none, aside).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/load.h"
#include "config/schema.h"
#include "tests/unit/config/config_test_support.h"

namespace pp::config::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "section.key" of every `key = value` line under a `[section]` header: a
// line scan, independent of the TOML parser under test.
std::set<std::string> keys_written_in(const std::string& toml) {
  std::set<std::string> keys;
  const std::regex section_re(R"(^\s*\[([a-z_.]+)\]\s*(#.*)?$)");
  const std::regex key_re(R"(^\s*([a-z_]+)\s*=)");
  std::istringstream lines(toml);
  std::string line;
  std::string section;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, section_re)) {
      section = m[1];
    } else if (std::regex_search(line, m, key_re)) {
      keys.insert(section + "." + std::string(m[1]));
    }
  }
  return keys;
}

std::set<std::string> schema_keys() {
  std::set<std::string> keys;
  for (const auto& k : all_keys()) keys.insert(k.full_name());
  return keys;
}

Settings defaults_with_bootstrap(std::vector<std::string> bootstrap) {
  Settings s;
  s.upstream.bootstrap_servers = std::move(bootstrap);
  return s;
}

TEST(ExampleConfig, LoadsAndEqualsTheDefaults) {
  const std::string path = std::string(PP_SOURCE_DIR) + "/config/produce-proxy.example.toml";
  const auto s = load_settings({path, {}});
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(*s, defaults_with_bootstrap({"kafka-1:9092"}));
}

TEST(ExampleConfig, DocumentsEveryKey) {
  const std::string text = read_text(std::string(PP_SOURCE_DIR) + "/config/produce-proxy.example.toml");
  EXPECT_EQ(keys_written_in(text), schema_keys());
  // Each key has a comment right above it or on its line.
  std::istringstream lines(text);
  std::string line;
  std::string previous;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != '#' && line[0] != '[' && line.find('=') != std::string::npos) {
      const bool commented = previous.starts_with("#") || line.find('#') != std::string::npos ||
                             previous.find('=') != std::string::npos;  // a pair like retry_backoff_*
      EXPECT_TRUE(commented) << "undocumented: " << line;
    }
    previous = line;
  }
}

// The ```toml block under "## Configuration" in the project's
// docs/design/INTERFACES.md; nullopt (a failure) if the file or block is gone.
std::optional<std::string> interfaces_config_block() {
  const std::filesystem::path path = std::filesystem::path(PP_SOURCE_DIR) / "docs" / "design" / "INTERFACES.md";
  if (!std::filesystem::exists(path)) return std::nullopt;
  const std::string md = read_text(path.string());
  const auto heading = md.find("## Configuration");
  if (heading == std::string::npos) return std::nullopt;
  const auto open = md.find("```toml\n", heading);
  if (open == std::string::npos) return std::nullopt;
  const auto start = open + 8;
  const auto close = md.find("```", start);
  return md.substr(start, close - start);
}

TEST(InterfacesDoc, EveryDocumentedKeyIsInTheSchemaAndViceVersa) {
  const auto block = interfaces_config_block();
  ASSERT_TRUE(block) << "docs/design/INTERFACES.md or its ```toml block under \"## Configuration\" is missing";
  EXPECT_EQ(keys_written_in(*block), schema_keys());
}

TEST(InterfacesDoc, TheDocumentedValuesAreTheDefaults) {
  const auto block = interfaces_config_block();
  ASSERT_TRUE(block) << "docs/design/INTERFACES.md or its ```toml block under \"## Configuration\" is missing";
  // Loading it also proves no key there is unknown to the schema or out of range.
  const auto s = parse_settings(*block, "INTERFACES.md");
  ASSERT_TRUE(s) << format_errors(s.error());
  EXPECT_EQ(*s, defaults_with_bootstrap({"kafka-1:9092"}));
}

}  // namespace
}  // namespace pp::config::test
