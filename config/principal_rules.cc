#include "config/principal_rules.h"

#include <algorithm>
#include <set>
#include <string>

#include "config/suggest.h"

namespace pp::config {
namespace {

// A quota above 2^40 bytes a second is a unit typo, not a quota.
constexpr std::int64_t kMaxBytesPerSecond = std::int64_t{1} << 40;
// Kafka's own limit on a topic name's length.
constexpr std::size_t kMaxTopicName = 249;

Location at(const Document& doc, const toml::node& node) {
  const auto& begin = node.source().begin;
  if (begin.line == 0) return Location{doc.file_name, 1, 1};
  return Location{doc.file_name, begin.line, begin.column};
}

bool topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

class EntryReader {
 public:
  EntryReader(const Document& doc, std::vector<ConfigError>& errors, std::string prefix)
      : doc_(doc), errors_(errors), prefix_(std::move(prefix)) {}

  bool ok() const { return ok_; }

  void error(const toml::node& node, const std::string& message) {
    errors_.push_back(ConfigError{at(doc_, node), message});
    ok_ = false;
  }

  void read_name(const toml::node& node, ListenerSettings::PrincipalRule& rule) {
    const auto* v = node.as_string();
    if (v == nullptr || v->get().empty()) {
      error(node, prefix_ + "name must be a non-empty string");
      return;
    }
    rule.name = v->get();
  }

  void read_topics(const toml::node& node, ListenerSettings::PrincipalRule& rule) {
    const auto* array = node.as_array();
    if (array == nullptr) {
      error(node, prefix_ + "topics must be an array of strings");
      return;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const std::string name = prefix_ + "topics[" + std::to_string(i) + "]";
      const auto* v = element.as_string();
      if (v == nullptr) {
        error(element, name + " must be a string");
        continue;
      }
      if (const auto problem = topic_pattern_problem(v->get())) {
        error(element, name + " = \"" + v->get() + "\" is not valid: " + *problem);
        continue;
      }
      rule.topics.push_back(v->get());
    }
  }

  void read_quota(const toml::node& node, ListenerSettings::PrincipalRule& rule) {
    const auto* v = node.as_integer();
    if (v == nullptr) {
      error(node, prefix_ + "produce_bytes_per_second must be an integer");
      return;
    }
    if (v->get() < 0 || v->get() > kMaxBytesPerSecond) {
      error(node, prefix_ + "produce_bytes_per_second = " + std::to_string(v->get()) + " is out of range [0, " +
                      std::to_string(kMaxBytesPerSecond) + "]");
      return;
    }
    rule.produce_bytes_per_second = v->get();
  }

  void read_idempotent_write(const toml::node& node, ListenerSettings::PrincipalRule& rule) {
    const auto* v = node.as_boolean();
    if (v == nullptr) {
      error(node, prefix_ + "idempotent_write must be true or false");
      return;
    }
    rule.idempotent_write = v->get();
  }

  void unknown(const toml::node& node, std::string_view key) {
    std::vector<std::string> known(std::begin(kPrincipalRuleKeys), std::end(kPrincipalRuleKeys));
    const auto hint = nearest(key, known);
    error(node, "unknown key '" + prefix_ + std::string(key) + "'" +
                    (hint ? "; did you mean '" + prefix_ + *hint + "'?" : ""));
  }

 private:
  const Document& doc_;
  std::vector<ConfigError>& errors_;
  std::string prefix_;
  bool ok_ = true;
};

std::optional<ListenerSettings::PrincipalRule> read_entry(const Document& doc, const toml::node& node,
                                                          std::size_t index, std::vector<ConfigError>& errors) {
  const std::string prefix = "listener.principals[" + std::to_string(index) + "].";
  if (!node.is_table()) {
    errors.push_back({at(doc, node), "listener.principals[" + std::to_string(index) + "] must be a table"});
    return std::nullopt;
  }
  EntryReader reader(doc, errors, prefix);
  ListenerSettings::PrincipalRule rule;
  for (auto&& [key, value] : *node.as_table()) {
    const std::string_view k = key.str();
    if (k == "name") {
      reader.read_name(value, rule);
    } else if (k == "topics") {
      reader.read_topics(value, rule);
    } else if (k == "idempotent_write") {
      reader.read_idempotent_write(value, rule);
    } else if (k == "produce_bytes_per_second") {
      reader.read_quota(value, rule);
    } else {
      reader.unknown(value, k);
    }
  }
  if (rule.name.empty() && reader.ok()) reader.error(node, prefix + "name is missing");
  if (!reader.ok()) return std::nullopt;
  return rule;
}

}  // namespace

std::optional<std::string> topic_pattern_problem(std::string_view pattern) {
  if (pattern.empty()) return std::string("empty");
  const std::string_view stem = pattern.back() == '*' ? pattern.substr(0, pattern.size() - 1) : pattern;
  if (stem.find('*') != std::string_view::npos) return std::string("'*' may only end a prefix (\"logs-*\")");
  if (!std::all_of(stem.begin(), stem.end(), topic_char)) {
    return std::string("a topic name has only ASCII letters, digits, '.', '_' and '-'");
  }
  if (stem.size() > kMaxTopicName) return std::string("longer than a topic name's 249 characters");
  return std::nullopt;
}

std::vector<ListenerSettings::PrincipalRule> read_principal_rules(const Document& doc,
                                                                  std::vector<ConfigError>& errors) {
  std::vector<ListenerSettings::PrincipalRule> rules;
  const toml::node* listener = section_table(doc.root, "listener");
  if (listener == nullptr || !listener->is_table()) return rules;
  const toml::node* node = listener->as_table()->get("principals");
  if (node == nullptr) return rules;
  const auto* array = node->as_array();
  if (array == nullptr) {
    errors.push_back({at(doc, *node), "listener.principals must be an array of tables ([[listener.principals]])"});
    return rules;
  }
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < array->size(); ++i) {
    auto rule = read_entry(doc, *array->get(i), i, errors);
    if (!rule) continue;
    if (!names.insert(rule->name).second) {
      errors.push_back({at(doc, *array->get(i)), "listener.principals[" + std::to_string(i) + "].name = \"" +
                                                     rule->name + "\" is named by an earlier entry too"});
      continue;
    }
    rules.push_back(std::move(*rule));
  }
  return rules;
}

}  // namespace pp::config
