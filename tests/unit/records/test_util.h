// Helpers shared by the records tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/protocol/wire_reader.h"

namespace pp::test {

inline Bytes from_hex(std::string_view hex) {
  Bytes out;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int high = -1;
  for (char c : hex) {
    const int n = nibble(c);
    if (n < 0) continue;  // whitespace, newlines
    if (high < 0) {
      high = n;
    } else {
      out.push_back(static_cast<std::uint8_t>(high << 4 | n));
      high = -1;
    }
  }
  return out;
}

inline Bytes read_vector(const std::string& name) {
  const std::string path = std::string(PP_SOURCE_DIR) + "/tests/unit/records/vectors/" + name + ".hex";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing vector " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return from_hex(ss.str());
}

inline Bytes bytes_of(std::string_view s) {
  return Bytes(s.begin(), s.end());
}
inline std::string str(ByteView b) {
  return std::string(b.begin(), b.end());
}
inline std::optional<std::string> str(std::optional<ByteView> b) {
  if (!b) return std::nullopt;
  return str(*b);
}

// Envoy-style checks of a decoder over `good` (docs/design/ARCHITECTURE.md
// habit 2): every strict prefix must fail cleanly (never crash), and so must
// `good` with bytes appended, and the error must name a field.
template <class Decode>
void expect_prefixes_fail(ByteView good, Decode&& decode) {
  for (std::size_t n = 0; n < good.size(); ++n) {
    auto result = decode(good.first(n));
    EXPECT_FALSE(result.has_value()) << "prefix of " << n << " of " << good.size() << " bytes decoded";
    if (!result.has_value()) {
      EXPECT_FALSE(result.error().field.empty()) << "prefix " << n;
      EXPECT_LE(result.error().offset, good.size() + 64) << result.error().describe();
    }
  }
}

template <class Decode>
void expect_trailing_garbage_fails(ByteView good, Decode&& decode) {
  for (Bytes extra : {Bytes{0}, Bytes{0xff, 0xff, 0xff, 0xff}, Bytes(100, 0x41)}) {
    Bytes padded(good.begin(), good.end());
    padded.insert(padded.end(), extra.begin(), extra.end());
    auto result = decode(ByteView(padded));
    EXPECT_FALSE(result.has_value()) << extra.size() << " bytes of garbage accepted";
  }
}

}  // namespace pp::test
