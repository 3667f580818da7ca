// config-reference: prints docs/configuration.md, the configuration reference,
// from the code that defines the configuration:
//   - the keys, their order, ranges and SIGHUP behaviour from config/schema.h
//     (visit_keys), their types and defaults from config/settings.h;
//   - each key's meaning from the comment above it in the annotated example
//     config (config/produce-proxy.example.toml). A key with no comment of its
//     own shares the comment of the key right above it only if that comment
//     names it (retry_backoff_ms and retry_backoff_max_ms) or kSharesComment
//     lists it.
//
//   config-reference [EXAMPLE_TOML]   (default: the source tree's example)
//
// Exits 1, naming what is missing, when a schema key has no comment in the
// example or uses a Check this file does not describe: the drift test then
// fails, so no key reaches a release undocumented.
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "config/schema.h"
#include "config/settings.h"

namespace {

using pp::config::Apply;
using pp::config::Check;
using pp::config::KeySpec;

// Keys documented by the comment of the key above them without being named
// in it: "A client certificate (chain) and its private key".
const std::set<std::string> kSharesComment = {"upstream.tls.key_file"};

// The comments of the example config, by what they describe.
struct ExampleComments {
  std::map<std::string, std::string> key;                         // "section.key" -> its paragraph
  std::map<std::string, std::string> section_intro;               // paragraphs before the first key's own
  std::map<std::string, std::vector<std::string>> section_notes;  // comment lines after a section's last key
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A comment block's lines joined into paragraphs ("#" alone separates them).
std::vector<std::string> paragraphs(const std::vector<std::string>& lines) {
  std::vector<std::string> out(1);
  for (const auto& line : lines) {
    if (line.empty()) {
      if (!out.back().empty()) out.emplace_back();
    } else {
      out.back() += (out.back().empty() ? "" : " ") + line;
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

ExampleComments read_example(std::istream& in) {
  ExampleComments c;
  const std::regex section_re(R"(^\[([a-z_.]+)\]\s*$)");
  const std::regex key_re(R"(^([a-z_]+)\s*=)");
  std::string section, previous_key, line;
  std::vector<std::string> block;  // comment lines since the last key or header, "#" prefix removed
  std::smatch m;
  auto flush_notes = [&] {
    while (!block.empty() && trim(block.front()).empty()) block.erase(block.begin());
    if (!section.empty() && !block.empty()) c.section_notes[section] = block;
    block.clear();
  };
  while (std::getline(in, line)) {
    if (line.starts_with("#")) {
      block.push_back(line.size() > 1 && line[1] == ' ' ? line.substr(2) : line.substr(1));
    } else if (std::regex_match(line, m, section_re)) {
      flush_notes();
      section = m[1];
      previous_key.clear();
    } else if (std::regex_search(line, m, key_re) && !section.empty()) {
      const std::string name = section + "." + std::string(m[1]);
      auto paras = paragraphs(block);
      const std::string& above = previous_key.empty() ? "" : c.key[previous_key];
      const bool named = std::regex_search(above, std::regex("\\b" + std::string(m[1]) + "\\b"));
      if (paras.empty() && !above.empty() && (named || kSharesComment.contains(name))) paras = {above};
      if (paras.size() > 1 && previous_key.empty()) {
        for (std::size_t i = 0; i + 1 < paras.size(); ++i) {
          c.section_intro[section] += (i ? " " : "") + paras[i];
        }
      }
      if (!paras.empty()) c.key[name] = paras.back();
      previous_key = name;
      block.clear();
    } else if (trim(line).empty()) {
      flush_notes();
      previous_key.clear();
    }
  }
  flush_notes();
  return c;
}

// The comment without what the table's own columns say ("1 to 1000000.",
// "Live."), flattened to one table cell.
std::string meaning(std::string text) {
  static const std::regex restated(R"((^|\. )(-?[0-9]+ to -?[0-9]+( each)?\.|Live\.)( |$))");
  for (std::string before; before != text;) {
    before = text;
    text = std::regex_replace(before, restated, "$1", std::regex_constants::format_first_only);
  }
  return trim(text);
}

std::string cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

template <class E>
std::string choices() {
  std::string out;
  for (const auto name : pp::config::enum_names<E>()) out += (out.empty() ? "" : " | ") + std::string(name);
  return out;
}

// What a Check accepts, or "" for a Check this file does not know yet.
std::string check_text(Check check) {
  switch (check) {
    case Check::kNone:
      return "any";
    case Check::kListenAddress:
      return "host:port ([v6]:port); port 0: any free port";
    case Check::kAdvertisedAddress:
      return "empty, or host:port";
    case Check::kBootstrapList:
      return "one or more \"host:port\" (port 1-65535), or [\"embedded\"]";
    case Check::kClientId:
      return "at most 32767 bytes";
    case Check::kSaslMechanism:
      return "\"\" | PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | OAUTHBEARER";
    case Check::kReadableFile:
      return "empty, or a file the proxy can read";
    case Check::kEnvironmentName:
      return "empty, or an environment variable's name";
    case Check::kCommand:
      return "empty, or an argv: the program first";
    case Check::kSaslMechanisms:
      return "distinct PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512";
    case Check::kSpoolDir:
      return "empty (off), or a directory the proxy can create or write";
    case Check::kTopicAck:
      return "\"NAME=MODE\" or \"PREFIX*=MODE\"; MODE upstream | spool";
    default:
      return "";
  }
}

struct Row {
  KeySpec spec;
  std::string type;
  std::string default_value;
  std::string range;
};

template <class T>
Row describe(const KeySpec& spec, const T& field) {
  Row row{spec, "", pp::config::format_value(field), check_text(spec.check)};
  if constexpr (std::is_same_v<T, bool>) {
    row.type = "boolean";
    row.range = "true | false";
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    row.type = "integer";
    row.range = std::to_string(spec.min) + " to " + std::to_string(spec.max);
  } else if constexpr (std::is_enum_v<T>) {
    row.type = "string";
    row.range = choices<T>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    row.type = "list of strings";
    if (field.empty() && spec.check == Check::kBootstrapList) row.default_value = "none: required";
  } else {
    static_assert(std::is_same_v<T, std::string>, "a Settings member type config-reference does not describe");
    row.type = "string";
  }
  return row;
}

void print_preamble(std::ostream& out) {
  out << "# Configuration reference\n\n"
         "<!-- Generated by scripts/gen_docs.sh (tests/ops/reference_docs/config_reference.cc) from\n"
         "     config/schema.h, config/settings.h and the comments of config/produce-proxy.example.toml.\n"
         "     Do not edit: change those and run scripts/gen_docs.sh. -->\n\n"
         "produce-proxy reads one TOML file: `--config FILE`, else `$PRODUCE_PROXY_CONFIG`, else\n"
         "`/etc/produce-proxy/produce-proxy.toml`. `--set section.key=value` overrides one key (repeatable);\n"
         "`--check-config` prints every problem at once as `FILE:LINE:COLUMN: message` and exits 2, or exits 0.\n"
         "A key left out takes its default; an unknown key is an error naming the nearest known key.\n"
         "The annotated example is [config/produce-proxy.example.toml](../config/produce-proxy.example.toml).\n\n"
         "**SIGHUP** (`systemctl reload produce-proxy`): a `live` key's new value applies without a restart; a\n"
         "changed `restart` key is logged as needing a restart and the old value stays in force.\n";
}

void print_notes(std::ostream& out, const std::vector<std::string>& lines) {
  out << "\n```toml\n";
  for (const auto& line : lines) out << "# " << line << "\n";
  out << "```\n";
}

// Prints the document; returns the problems found (empty: complete).
std::vector<std::string> print_reference(std::ostream& out, const ExampleComments& comments) {
  std::vector<Row> rows;
  const pp::config::Settings defaults;
  pp::config::visit_keys([&](const KeySpec& spec, const auto& field) { rows.push_back(describe(spec, field)); },
                         defaults);
  std::vector<std::string> problems;
  print_preamble(out);
  std::string section;
  for (const auto& row : rows) {
    const std::string name = row.spec.full_name();
    if (row.spec.section != section) {
      if (!section.empty() && comments.section_notes.contains(section)) {
        print_notes(out, comments.section_notes.at(section));
      }
      section = row.spec.section;
      out << "\n## [" << section << "]\n\n";
      if (comments.section_intro.contains(section)) out << comments.section_intro.at(section) << "\n\n";
      out << "| key | type | default | range | SIGHUP | meaning |\n|---|---|---|---|---|---|\n";
    }
    const auto comment = comments.key.find(name);
    if (comment == comments.key.end() || comment->second.empty()) {
      problems.push_back(name + ": no comment of its own above it in config/produce-proxy.example.toml");
    }
    if (row.range.empty()) problems.push_back(name + ": its Check has no text in check_text()");
    out << "| `" << name << "` | " << row.type << " | `" << cell(row.default_value) << "` | " << cell(row.range)
        << " | " << (row.spec.apply == Apply::kLive ? "live" : "restart") << " | "
        << cell(comment == comments.key.end() ? "" : meaning(comment->second)) << " |\n";
  }
  if (comments.section_notes.contains(section)) print_notes(out, comments.section_notes.at(section));
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : PP_SOURCE_DIR "/config/produce-proxy.example.toml";
  std::ifstream in(path);
  if (!in) {
    std::cerr << "config-reference: cannot read " << path << "\n";
    return 1;
  }
  std::ostringstream doc;
  const auto problems = print_reference(doc, read_example(in));
  for (const auto& p : problems) std::cerr << "config-reference: " << p << "\n";
  if (!problems.empty()) return 1;
  std::cout << doc.str();
  return 0;
}
