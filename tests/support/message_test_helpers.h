// Shared by the per-API message tests (tests/unit/protocol/<api>_test.cc):
// Kafka's primitives written by hand (independently of WireWriter) to state
// expected bytes field by field, and the round-trip checks every API's test
// runs: whole, every strict prefix, trailing garbage, single-byte mutations.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include "proxy/protocol/schema.h"
#include "tests/support/schema_values.h"

namespace pp::test_messages {

// Kafka's primitives written by hand, independently of WireWriter.
class Expect {
 public:
  explicit Expect(bool flexible) : flex_(flexible) {}
  Expect& i8(std::int64_t v) { return be(v, 1); }
  Expect& i16(std::int64_t v) { return be(v, 2); }
  Expect& i32(std::int64_t v) { return be(v, 4); }
  Expect& i64(std::int64_t v) { return be(v, 8); }
  Expect& uvarint(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<std::uint8_t>(v | 0x80));
    out_.push_back(static_cast<std::uint8_t>(v));
    return *this;
  }
  // Length prefixes: classic int16 (strings) or int32, compact uvarint(n + 1).
  Expect& length(std::size_t n, bool wide) {
    if (flex_) return uvarint(n + 1);
    return wide ? i32(static_cast<std::int64_t>(n)) : i16(static_cast<std::int64_t>(n));
  }
  Expect& null_length(bool wide) {
    if (flex_) return uvarint(0);
    return wide ? i32(-1) : i16(-1);
  }
  Expect& str(std::string_view s) {
    length(s.size(), false);
    out_.insert(out_.end(), s.begin(), s.end());
    return *this;
  }
  Expect& null_str() { return null_length(false); }
  Expect& bytes(ByteView b) {
    length(b.size(), true);
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }
  Expect& null_bytes() { return null_length(true); }
  Expect& array(std::size_t n) { return length(n, true); }
  Expect& null_array() { return null_length(true); }
  Expect& raw(std::initializer_list<std::uint8_t> b) {
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }
  // An empty tagged-field section, only in flexible versions.
  Expect& no_tags() { return flex_ ? uvarint(0) : *this; }
  const Bytes& bytes() const { return out_; }

 private:
  Expect& be(std::int64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  bool flex_;
  Bytes out_;
};

// "0005 504c" -> "0005504c": expected bytes are written grouped by field.
inline std::string unspaced(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

inline std::string hex(ByteView b) {
  std::string s;
  char buf[4];
  for (auto c : b) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    s += buf;
  }
  return s;
}

// The value a decoder produces at `version` for `full`.
template <Message M>
M at_version(M full, std::int16_t version) {
  testing::normalize(full, false, context_for<M>(version));
  return full;
}

// Every field `version` carries differs from its default (the fixture really
// sets every field), recursing into structs and the first array element.
template <class T>
void expect_all_set(const T& v, std::int16_t version, const std::string& path) {
  using namespace schema_detail;
  if constexpr (IsOptional<T>::value) {
    if (v) expect_all_set(*v, version, path);
  } else if constexpr (IsVector<T>::value) {
    if (!v.empty()) expect_all_set(v.front(), version, path + "[0]");
  } else if constexpr (Described<T>) {
    static const T kDefaults{};
    std::apply(
        [&](const auto&... f) {
          (([&] {
             if (!f.versions.contains(version)) return;
             const std::string p = path + "." + std::string(f.name);
             EXPECT_FALSE(v.*(f.member) == kDefaults.*(f.member)) << p << " is default";
             expect_all_set(v.*(f.member), version, p);
           }()),
           ...);
        },
        T::fields());
  }
}

// Decodes `value`'s encoding whole, then every strict prefix (each must fail
// with a DecodeError), then with garbage appended (decoding must stop exactly
// at the end of the encoding). Returns the encoding.
template <Message M>
Bytes expect_round_trip(const M& value, std::int16_t version) {
  const Bytes encoded = encode_body(value, version);
  WireReader whole(encoded);
  auto decoded = decode_body<M>(whole, version);
  EXPECT_TRUE(decoded.has_value()) << decoded.error().describe();
  if (!decoded) return encoded;
  EXPECT_TRUE(*decoded == value);
  EXPECT_TRUE(whole.empty());
  EXPECT_EQ(hex(encode_body(*decoded, version)), hex(encoded));

  for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
    WireReader prefix(ByteView(encoded).first(cut));
    auto partial = decode_body<M>(prefix, version);
    EXPECT_FALSE(partial.has_value()) << "a " << cut << "-byte prefix decoded";
    if (!partial) {
      EXPECT_LE(partial.error().offset, cut);
    }
  }

  Bytes longer = encoded;
  for (std::uint8_t b : {0x00, 0xff, 0x7f, 0x01, 0x80, 0xde, 0xad}) longer.push_back(b);
  WireReader tail(longer);
  auto with_tail = decode_body<M>(tail, version);
  EXPECT_TRUE(with_tail.has_value());
  if (with_tail) {
    EXPECT_TRUE(*with_tail == value);
  }
  EXPECT_EQ(tail.position(), encoded.size());
  return encoded;
}

// Each byte replaced by a few hostile values: decoding may fail or succeed,
// but must not crash or read out of bounds (run under the asan preset).
template <Message M>
void expect_mutations_safe(const Bytes& encoded, std::int16_t version) {
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    for (std::uint8_t b : {0x00, 0x7f, 0x80, 0xff}) {
      Bytes mutated = encoded;
      mutated[i] = b;
      WireReader r(mutated);
      auto res = decode_body<M>(r, version);
      if (res) {
        EXPECT_LE(r.position(), mutated.size());
      }
    }
  }
}

}  // namespace pp::test_messages
