// Document -> Settings: the per-key checks (type, range, address syntax, enum
// spelling) and the unknown-key walk. Combinations of keys are checked in
// combinations.cc, on values that passed these checks.
#include <algorithm>
#include <cctype>
#include <set>

#include "config/address.h"
#include "config/combinations.h"
#include "config/document.h"
#include "config/principal_rules.h"
#include "config/sasl_checks.h"
#include "config/schema.h"
#include "config/spool_checks.h"
#include "config/suggest.h"

namespace pp::config {
namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class Reader {
 public:
  Reader(const Document& doc, std::vector<ConfigError>& errors) : doc_(doc), errors_(errors) {}

  void report_unknown() {
    const auto sections = all_sections();
    for (auto&& [key, node] : doc_.root) {
      const std::string_view section = key.str();
      // A table is placed by its [header]; a key by its name.
      const Location at = node.is_table() ? node_location(node) : key_location(key, node);
      if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
        if (node.is_table()) {
          const auto hint = suggest_section(section);
          error(at, "unknown section [" + std::string(section) + "]" + (hint ? "; did you mean [" + *hint + "]?" : ""));
        } else {
          unknown_key(at, "", section);
        }
        continue;
      }
      report_unknown_in(std::string(section), node, at);
    }
  }

  // Keys of one section; a sub-table that is itself a section ([upstream.sasl]) is walked in turn.
  void report_unknown_in(const std::string& section, const toml::node& node, const Location& at) {
    if (!node.is_table()) {
      error(at, "[" + section + "] must be a table, not " + type_name(node));
      return;
    }
    const auto sections = all_sections();
    for (auto&& [name, value] : *node.as_table()) {
      if (find_key(section, name.str()) != nullptr) continue;
      if (section == "listener" && name.str() == "principals") continue;  // principal_rules.cc
      const std::string nested = section + "." + std::string(name.str());
      if (std::find(sections.begin(), sections.end(), nested) != sections.end()) {
        report_unknown_in(nested, value, value.is_table() ? node_location(value) : key_location(name, value));
        continue;
      }
      report_unknown_value(key_location(name, value), section, std::string(name.str()), value);
    }
  }

  Settings read() {
    Settings s;
    visit_keys(
        [&](const KeySpec& spec, auto& field) {
          const toml::node* node = lookup(spec);
          if (node == nullptr) return;
          const Location at = value_location(spec, *node);
          present_.emplace(spec.full_name(), at);
          if (!read_field(spec, *node, at, field)) bad_.insert(spec.full_name());
        },
        s);
    return s;
  }

  KeyFacts facts() const {
    return KeyFacts{doc_.file_name, doc_.file_missing, present_, bad_, upstream_table_location()};
  }

 private:
  void error(Location at, std::string message) { errors_.push_back(ConfigError{std::move(at), std::move(message)}); }

  // A dotted key (Kafka style, `batch.size = 1`) is a sub-table in TOML:
  // report its leaves by their dotted names, which suggest_key() understands.
  void report_unknown_value(Location at, std::string_view section, const std::string& name, const toml::node& value) {
    if (!value.is_table() || value.as_table()->empty()) {
      unknown_key(std::move(at), section, name);
      return;
    }
    for (auto&& [sub, sub_value] : *value.as_table()) {
      // On the same line it is one dotted key: point at its start.
      Location leaf = key_location(sub, sub_value);
      if (leaf.line == at.line) leaf = at;
      report_unknown_value(std::move(leaf), section, name + "." + std::string(sub.str()), sub_value);
    }
  }

  void unknown_key(Location at, std::string_view section, std::string_view name) {
    const std::string full = section.empty() ? std::string(name) : std::string(section) + "." + std::string(name);
    const auto hint = suggest_key(section, name);
    error(std::move(at), "unknown key '" + full + "'" + (hint ? "; did you mean '" + *hint + "'?" : ""));
  }

  Location node_location(const toml::node& node) const {
    const auto& begin = node.source().begin;
    if (begin.line == 0) return Location{doc_.file_name, 1, 1};
    return Location{doc_.file_name, begin.line, begin.column};
  }

  Location key_location(const toml::key& key, const toml::node& node) const {
    const auto& begin = key.source().begin;
    if (begin.line == 0) return node_location(node);
    return Location{doc_.file_name, begin.line, begin.column};
  }

  // A --set override has no place in the file: its location is the option.
  Location value_location(const KeySpec& spec, const toml::node& node) const {
    const auto it = doc_.overridden.find(spec.full_name());
    return it != doc_.overridden.end() ? it->second : node_location(node);
  }

  std::optional<Location> upstream_table_location() const {
    const toml::node* upstream = doc_.root.get("upstream");
    if (upstream == nullptr || upstream->source().begin.line == 0) return std::nullopt;
    return node_location(*upstream);
  }

  // A section may be nested ([upstream.sasl]): its table is a sub-table.
  const toml::node* lookup(const KeySpec& spec) const {
    const toml::node* section = section_table(doc_.root, spec.section);
    if (section == nullptr || !section->is_table()) return nullptr;
    return section->as_table()->get(spec.name);
  }

  bool wrong_type(const KeySpec& spec, const toml::node& node, const Location& at, std::string_view expected) {
    error(at, spec.full_name() + " must be " + std::string(expected) + ", not " + type_name(node));
    return false;
  }

  bool read_field(const KeySpec& spec, const toml::node& node, const Location& at, std::int64_t& out) {
    const auto* v = node.as_integer();
    if (v == nullptr) return wrong_type(spec, node, at, "an integer");
    const std::int64_t value = v->get();
    const std::string shown = spec.full_name() + " = " + std::to_string(value);
    if (spec.name == "max_partition_window" && value < spec.min) {
      error(at, shown +
                    " is below 5, the initial window every partition starts at (and falls "
                    "back to on a leader change); the cap cannot be lower");
      return false;
    }
    if (value < spec.min || value > spec.max) {
      error(at, shown + " is out of range [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]");
      return false;
    }
    out = value;
    return true;
  }

  bool read_field(const KeySpec& spec, const toml::node& node, const Location& at, bool& out) {
    const auto* v = node.as_boolean();
    if (v == nullptr) return wrong_type(spec, node, at, "true or false");
    out = v->get();
    return true;
  }

  bool read_field(const KeySpec& spec, const toml::node& node, const Location& at, std::string& out) {
    const auto* v = node.as_string();
    if (v == nullptr) return wrong_type(spec, node, at, "a string");
    const std::string& value = v->get();
    std::optional<std::string> problem;
    switch (spec.check) {
      case Check::kListenAddress:
        problem = host_port_problem(value, /*allow_port_zero=*/true);
        break;
      case Check::kAdvertisedAddress:
        if (!value.empty()) problem = host_port_problem(value, /*allow_port_zero=*/true);
        break;
      case Check::kClientId:
        // Kafka's STRING: an int16 length.
        if (value.size() > 32767) problem = "longer than 32767 bytes";
        break;
      case Check::kSaslMechanism:
      case Check::kReadableFile:
      case Check::kEnvironmentName:
        problem = sasl_value_problem(spec.check, value);
        break;
      case Check::kNone:
      case Check::kBootstrapList:
      case Check::kCommand:
      case Check::kSaslMechanisms:
      case Check::kTopicAck:
        break;
      case Check::kSpoolDir:
        problem = spool_dir_problem(value);
        break;
    }
    if (problem) {
      error(at, spec.full_name() + " = " + format_value(value) + " is not valid: " + *problem);
      return false;
    }
    out = value;
    return true;
  }

  bool read_field(const KeySpec& spec, const toml::node& node, const Location& at, std::vector<std::string>& out) {
    const auto* array = node.as_array();
    if (array == nullptr) return wrong_type(spec, node, at, "an array of strings");
    if (spec.check == Check::kCommand) return read_command(spec, *array, at, out);
    if (spec.check == Check::kSaslMechanisms) return read_mechanisms(spec, *array, at, out);
    if (spec.check == Check::kTopicAck) return read_topic_ack(spec, *array, at, out);
    const bool overridden = doc_.overridden.contains(spec.full_name());
    std::vector<std::string> values;
    bool ok = true;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const Location element_at = overridden ? at : node_location(element);
      const std::string name = spec.full_name() + "[" + std::to_string(i) + "]";
      const auto* v = element.as_string();
      if (v == nullptr) {
        error(element_at, name + " must be a string, not " + type_name(element));
        ok = false;
        continue;
      }
      values.push_back(v->get());
      if (values.back() == kEmbeddedBootstrap) continue;
      if (const auto problem = host_port_problem(values.back(), /*allow_port_zero=*/false)) {
        error(element_at, name + " = " + format_value(values.back()) + " is not valid: " + *problem);
        ok = false;
      }
    }
    if (!ok) return false;
    if (values.empty()) {
      error(at, spec.full_name() +
                    " is empty: list at least one \"host:port\", or [\"embedded\"] for the "
                    "in-process demo cluster");
      return false;
    }
    if (values.size() > 1 && std::find(values.begin(), values.end(), kEmbeddedBootstrap) != values.end()) {
      error(at, "\"embedded\" must be the only entry of " + spec.full_name() +
                    ": the in-process cluster replaces the real one");
      return false;
    }
    out = std::move(values);
    return true;
  }

  bool read_mechanisms(const KeySpec& spec, const toml::array& array, const Location& at,
                       std::vector<std::string>& out) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const auto* v = array.get(i)->as_string();
      if (v == nullptr) {
        error(at, spec.full_name() + "[" + std::to_string(i) + "] must be a string, not " + type_name(*array.get(i)));
        return false;
      }
      names.push_back(v->get());
    }
    if (const auto problem = mechanisms_problem(names)) {
      error(at, spec.full_name() + " " + *problem);
      return false;
    }
    out = std::move(names);
    return true;
  }

  bool read_topic_ack(const KeySpec& spec, const toml::array& array, const Location& at,
                      std::vector<std::string>& out) {
    std::vector<std::string> entries;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const auto* v = array.get(i)->as_string();
      const std::string name = spec.full_name() + "[" + std::to_string(i) + "]";
      if (v == nullptr) {
        error(at, name + " must be a string, not " + type_name(*array.get(i)));
        return false;
      }
      if (const auto problem = topic_ack_problem(v->get())) {
        error(at, name + " is not valid: " + *problem);
        return false;
      }
      entries.push_back(v->get());
    }
    out = std::move(entries);
    return true;
  }

  bool read_command(const KeySpec& spec, const toml::array& array, const Location& at, std::vector<std::string>& out) {
    std::vector<std::string> argv;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const auto* v = array.get(i)->as_string();
      if (v == nullptr) {
        error(at, spec.full_name() + "[" + std::to_string(i) + "] must be a string, not " + type_name(*array.get(i)));
        return false;
      }
      argv.push_back(v->get());
    }
    if (const auto problem = command_problem(argv)) {
      error(at, spec.full_name() + " " + *problem);
      return false;
    }
    out = std::move(argv);
    return true;
  }

  template <class E>
    requires std::is_enum_v<E>
  bool read_field(const KeySpec& spec, const toml::node& node, const Location& at, E& out) {
    std::string choices;
    std::vector<std::string> names;
    for (const auto n : enum_names<E>()) {
      choices += (choices.empty() ? "" : " | ") + std::string(n);
      names.emplace_back(n);
    }
    const auto* v = node.as_string();
    if (v == nullptr) return wrong_type(spec, node, at, "a string: " + choices);
    if (const auto parsed = parse_enum<E>(v->get())) {
      out = *parsed;
      return true;
    }
    const auto hint = nearest(lower(v->get()), names);
    error(at, spec.full_name() + " = " + format_value(v->get()) + " is not one of " + choices +
                  (hint ? "; did you mean \"" + *hint + "\"?" : ""));
    return false;
  }

  const Document& doc_;
  std::vector<ConfigError>& errors_;
  std::map<std::string, Location, std::less<>> present_;
  std::set<std::string, std::less<>> bad_;
};

}  // namespace

Settings read_settings(const Document& doc, std::vector<ConfigError>& errors) {
  Reader reader(doc, errors);
  reader.report_unknown();
  Settings settings = reader.read();
  settings.listener.principals = read_principal_rules(doc, errors);
  check_combinations(settings, reader.facts(), errors);
  check_spool(settings, reader.facts(), errors);
  return settings;
}

}  // namespace pp::config
