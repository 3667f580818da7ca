// SaslHandshake v0-v1 (proxy/protocol/messages/sasl_handshake.h), bytes
// written by hand from SaslHandshakeRequest.json / SaslHandshakeResponse.json.
#include "proxy/protocol/messages/sasl_handshake.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "tests/support/schema_values.h"

namespace pp {
namespace {

// ---- helpers (kept per file: each API's test stands alone) ----

// "0005 504c" -> "0005504c": expected bytes are written grouped by field.
std::string unspaced(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

std::string hex(ByteView b) {
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

// ---- tests ----

TEST(SaslHandshake, VersionRange) {
  EXPECT_EQ(SaslHandshakeRequest::kApiKey, ApiKey::kSaslHandshake);
  EXPECT_EQ(SaslHandshakeResponse::kApiKey, ApiKey::kSaslHandshake);
  EXPECT_EQ(SaslHandshakeRequest::kVersions.min, 0);
  EXPECT_EQ(SaslHandshakeRequest::kVersions.max, 1);
  EXPECT_EQ(SaslHandshakeResponse::kVersions.min, 0);
  EXPECT_EQ(SaslHandshakeResponse::kVersions.max, 1);
  // flexibleVersions "none": no version we speak is flexible.
  EXPECT_FALSE(context_for<SaslHandshakeRequest>(1).flexible);
  EXPECT_FALSE(context_for<SaslHandshakeResponse>(1).flexible);
}

TEST(SaslHandshake, EveryVersionByHand) {
  SaslHandshakeRequest q;
  q.mechanism = "PLAIN";
  SaslHandshakeResponse r;
  r.error_code = ErrorCode::kUnsupportedSaslMechanism;
  r.mechanisms = {"PLAIN", "SCRAM-SHA-256"};
  for (std::int16_t v = 0; v <= 1; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    expect_all_set(q, v, "SaslHandshakeRequest");
    expect_all_set(r, v, "SaslHandshakeResponse");
    EXPECT_EQ(hex(expect_round_trip(q, v)), unspaced("0005 504c41494e"));
    EXPECT_EQ(hex(expect_round_trip(r, v)),
              unspaced("0021 00000002 0005 504c41494e 000d 534352414d2d5348412d323536"));
  }
}

TEST(SaslHandshake, EmptyMechanismListAndNoTags) {
  SaslHandshakeResponse r;
  // Tags we were handed are not written: this API has no tagged-field sections.
  r.unknown_tags = {RawTaggedField{0, {1}}};
  EXPECT_EQ(hex(encode_body(r, 1)), unspaced("0000 00000000"));
  r.unknown_tags.clear();
  expect_round_trip(r, 0);
}

TEST(SaslHandshake, NullMechanismIsRefused) {
  const Bytes wire = {0xff, 0xff};
  WireReader r(wire);
  auto res = decode_body<SaslHandshakeRequest>(r, 1);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(res.error().field, "mechanism");
}

TEST(SaslHandshake, VersionTwoIsRefused) {
  const Bytes wire = {0x00, 0x00};
  WireReader r(wire);
  auto res = decode_body<SaslHandshakeRequest>(r, 2);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
}

}  // namespace
}  // namespace pp
