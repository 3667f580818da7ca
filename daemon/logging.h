// spdlog set-up for the whole process ([log] of docs/design/INTERFACES.md): the level and
// one of two line formats, applied to the default logger and every logger
// registered so far (the layers' loggers clone the default one, so later
// ones inherit it too).
//
//   text: 2025-01-31T12:00:00.123Z info [upstream] broker 1 connected
//   json:
//   {"time":"2025-01-31T12:00:00.123456Z","level":"info","logger":"upstream","message":"broker 1
//   connected"}
//
// JSON lines are one object per line, whatever the message holds: quotes,
// backslashes and control characters (newlines included) are escaped, and
// bytes that are not UTF-8 (a client's topic name, say) become U+FFFD, so a
// log collector never sees a broken line. Times are UTC.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace pp {

// level: trace | debug | info | warn | error; format: text | json (the
// spellings of config's LogLevel / LogFormat). Anything else is an error and
// changes nothing. Call it once at start-up, before the loop runs.
std::expected<void, std::string> configure_logging(std::string_view level, std::string_view format);

// The JSON string body of `text` (no surrounding quotes), as the json format
// writes messages. Exposed for tests.
std::string json_escape(std::string_view text);

}  // namespace pp
