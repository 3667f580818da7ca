#include "config/sections.h"

namespace pp::config {

const toml::node* find_section(const toml::table& root, std::string_view dotted) {
  const toml::table* table = &root;
  const toml::node* node = nullptr;
  while (true) {
    const auto dot = dotted.find('.');
    node = table->get(dotted.substr(0, dot));
    if (node == nullptr || dot == std::string_view::npos) return node;
    table = node->as_table();
    if (table == nullptr) return nullptr;
    dotted.remove_prefix(dot + 1);
  }
}

toml::table* ensure_section(toml::table& root, std::string_view dotted) {
  toml::table* table = &root;
  while (table != nullptr) {
    const auto dot = dotted.find('.');
    const std::string_view part = dotted.substr(0, dot);
    if (table->get(part) == nullptr) table->insert(part, toml::table{});
    table = table->get(part)->as_table();
    if (dot == std::string_view::npos) return table;
    dotted.remove_prefix(dot + 1);
  }
  return nullptr;
}

}  // namespace pp::config
