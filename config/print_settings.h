// --print-config: a Settings as TOML text, every key of config/schema.h's
// visit_keys with its effective value (defaults included), in
// docs/design/INTERFACES.md's section order. Walking visit_keys is what makes
// a key added to the schema appear here without a change to this file.
//
// The text parses back (parse_settings) into an equal Settings whenever no
// key is redacted: values are written in TOML's own syntax, strings escaped.
//
// Use: std::cout << config::print_settings(*config::load_settings(source));
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "config/schema.h"
#include "config/settings.h"

namespace pp::config {

// What a redacted value prints as (a TOML string).
inline constexpr std::string_view kRedacted = "(redacted)";

// Whether a key's value would itself be a credential: its name mentions a
// password, secret, token, credential or private key and it does not name
// where one is kept (`_file`, `_env`, `_command`) or a duration (`_ms`).
// No key of today's schema is one (secrets come only from the files and
// environment variables the [upstream.sasl] keys name), so this guards keys
// added later.
bool is_secret_key(const KeySpec& spec);

// The TOML text: a comment naming the redacted keys (or saying there are
// none), then each section's [header] and its keys; a key still at its
// default carries a "# default" comment. Values of keys for which
// `is_secret` is true print as kRedacted.
std::string print_settings(const Settings& settings,
                           const std::function<bool(const KeySpec&)>& is_secret = is_secret_key);

}  // namespace pp::config
