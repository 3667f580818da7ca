#include "daemon/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <memory>

namespace pp {

namespace {

// Bytes [0, n) of `s` form one well-formed UTF-8 sequence (RFC 3629: no
// overlongs, no surrogates, nothing past U+10FFFF); returns n, or 0.
std::size_t utf8_sequence(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf)
    n = 2;
  else if (lead >= 0xe0 && lead <= 0xef)
    n = 3, lo = lead == 0xe0 ? 0xa0 : 0x80, hi = lead == 0xed ? 0x9f : 0xbf;
  else if (lead >= 0xf0 && lead <= 0xf4)
    n = 4, lo = lead == 0xf0 ? 0x90 : 0x80, hi = lead == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xbf) return 0;
  }
  return n;
}

template <class Out>
void append_escaped(std::string_view in, Out& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto put = [&](std::string_view piece) { out.append(piece.data(), piece.data() + piece.size()); };
  for (std::size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(in.substr(i));
      if (n == 0) {
        put("\\ufffd");
        ++i;
      } else {
        put(in.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        put("\\\"");
        break;
      case '\\':
        put("\\\\");
        break;
      case '\n':
        put("\\n");
        break;
      case '\r':
        put("\\r");
        break;
      case '\t':
        put("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          const std::array<char, 6> u{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
          put(std::string_view(u.data(), u.size()));
        } else {
          const char ch = static_cast<char>(c);
          put(std::string_view(&ch, 1));
        }
    }
    ++i;
  }
}

// %j: the message, JSON-escaped.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    append_escaped(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

// %J: the logger's name, JSON-escaped.
class JsonLoggerFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    append_escaped(std::string_view(msg.logger_name.data(), msg.logger_name.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonLoggerFlag>(); }
};

// %N: "[name] " for a named logger, nothing for the default one, whose name
// is empty and would print as "[]".
class TextLoggerFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (msg.logger_name.size() == 0) return;
    dest.push_back('[');
    dest.append(msg.logger_name.data(), msg.logger_name.data() + msg.logger_name.size());
    dest.append(std::string_view("] "));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TextLoggerFlag>(); }
};

constexpr std::string_view kTextPattern = "%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %N%v";
constexpr std::string_view kJsonPattern =
    R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%J","message":"%j"})";

}  // namespace

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_escaped(text, out);
  return out;
}

std::expected<void, std::string> configure_logging(std::string_view level, std::string_view format) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},
  };
  const auto* found =
      std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return l.first == level; });
  if (found == std::end(kLevels)) {
    return std::unexpected("log.level \"" + std::string(level) + "\": expected trace, debug, info, warn or error");
  }
  if (format != "text" && format != "json") {
    return std::unexpected("log.format \"" + std::string(format) + "\": expected text or json");
  }

  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == "json") {
    formatter->add_flag<JsonMessageFlag>('j').add_flag<JsonLoggerFlag>('J').set_pattern(std::string(kJsonPattern));
  } else {
    formatter->add_flag<TextLoggerFlag>('N').set_pattern(std::string(kTextPattern));
  }
  spdlog::set_formatter(std::move(formatter));
  spdlog::set_level(found->second);
  return {};
}

}  // namespace pp
