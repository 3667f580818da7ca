// The attribute lists of SCRAM messages (RFC 5802 section 7): what both ends
// of an exchange, the listener's server and the upstream's client, split and
// read. Views into the caller's message; no allocation but the list.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace pp::sasl {

// "a=1,b=2" into {"a=1", "b=2"}; an empty message is one empty attribute.
std::vector<std::string_view> split_attributes(std::string_view message);
// The value of "k=value" when its letter is `key`, else nullopt.
std::optional<std::string_view> attribute(std::string_view attr, char key);

}  // namespace pp::sasl
