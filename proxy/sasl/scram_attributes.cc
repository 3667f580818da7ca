#include "proxy/sasl/scram_attributes.h"

namespace pp::sasl {

std::vector<std::string_view> split_attributes(std::string_view message) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = message.find(',', start);
    out.push_back(message.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<std::string_view> attribute(std::string_view attr, char key) {
  if (attr.size() < 2 || attr[0] != key || attr[1] != '=') return std::nullopt;
  return attr.substr(2);
}

}  // namespace pp::sasl
