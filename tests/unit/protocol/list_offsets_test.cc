// ListOffsets v1-v7 (proxy/protocol/messages/list_offsets.h). Expected bytes
// are written out field by field from ListOffsetsRequest.json /
// ListOffsetsResponse.json, independently of the schema.
#include "proxy/protocol/messages/list_offsets.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/schema_values.h"

namespace pp {
namespace {

// ---- helpers (kept per file: each API's test stands alone) ----

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

// ---- fixtures: every field set, per JSON ----

constexpr std::int64_t kTime = 1700000000123;

ListOffsetsRequest full_request() {
  ListOffsetsRequest r;
  r.replica_id = -1;  // what a consumer sends; Kafka's default is 0
  r.isolation_level = 1;
  r.topics = {ListOffsetsTopic{"orders", {ListOffsetsPartition{4, 12, kTime, {}}}, {}}};
  return r;
}

Bytes expected_request(std::int16_t v) {
  Expect e(v >= 6);
  e.i32(-1);
  if (v >= 2) e.i8(1);
  e.array(1).str("orders").array(1).i32(4);
  if (v >= 4) e.i32(12);
  e.i64(kTime).no_tags().no_tags().no_tags();
  return e.bytes();
}

ListOffsetsResponse full_response() {
  ListOffsetsResponse r;
  r.throttle_time_ms = 10;
  ListOffsetsPartitionResponse p{4, ErrorCode::kOffsetNotAvailable, kTime, 123456, 12, {}};
  r.topics = {ListOffsetsTopicResponse{"orders", {p}, {}}};
  return r;
}

Bytes expected_response(std::int16_t v) {
  Expect e(v >= 6);
  if (v >= 2) e.i32(10);
  e.array(1).str("orders").array(1).i32(4).i16(78).i64(kTime).i64(123456);
  if (v >= 4) e.i32(12);
  e.no_tags().no_tags().no_tags();
  return e.bytes();
}

// ---- tests ----

TEST(ListOffsets, VersionRange) {
  EXPECT_EQ(ListOffsetsRequest::kApiKey, ApiKey::kListOffsets);
  EXPECT_EQ(ListOffsetsResponse::kApiKey, ApiKey::kListOffsets);
  EXPECT_EQ(ListOffsetsRequest::kVersions.min, 1);
  EXPECT_EQ(ListOffsetsRequest::kVersions.max, 7);
  EXPECT_EQ(ListOffsetsResponse::kVersions.min, 1);
  EXPECT_EQ(ListOffsetsResponse::kVersions.max, 7);
  EXPECT_EQ(ListOffsetsRequest::kFlexibleSince, 6);
  EXPECT_EQ(ListOffsetsResponse::kFlexibleSince, 6);
}

TEST(ListOffsets, DefaultsAreKafkas) {
  const ListOffsetsPartition p;
  EXPECT_EQ(p.current_leader_epoch, -1);
  const ListOffsetsPartitionResponse r;
  EXPECT_EQ(r.timestamp, -1);
  EXPECT_EQ(r.offset, -1);
  EXPECT_EQ(r.leader_epoch, -1);
  EXPECT_EQ(ListOffsetsRequest{}.replica_id, 0);
}

TEST(ListOffsets, RequestEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 1; v <= 7; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const ListOffsetsRequest value = at_version(full_request(), v);
    expect_all_set(value, v, "ListOffsetsRequest");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_request(v)));
    expect_mutations_safe<ListOffsetsRequest>(encoded, v);
  }
}

TEST(ListOffsets, ResponseEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 1; v <= 7; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const ListOffsetsResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "ListOffsetsResponse");
    const Bytes encoded = expect_round_trip(value, v);
    EXPECT_EQ(hex(encoded), hex(expected_response(v)));
    expect_mutations_safe<ListOffsetsResponse>(encoded, v);
  }
}

TEST(ListOffsets, V1EarliestRequestByHand) {
  // replica -1, 1 topic "orders", 1 partition 0, timestamp -2 (earliest).
  ListOffsetsRequest r;
  r.replica_id = -1;
  r.topics = {
      ListOffsetsTopic{"orders", {ListOffsetsPartition{0, -1, kListOffsetsEarliest, {}}}, {}}};
  EXPECT_EQ(hex(encode_body(r, 1)),
            unspaced("ffffffff 00000001 0006 6f7264657273 00000001 00000000 fffffffffffffffe"));
}

TEST(ListOffsets, V7MaxTimestampRequestByHand) {
  // Flexible: compact array/string lengths are n + 1, and every struct ends
  // with an empty tag section.
  ListOffsetsRequest r;
  r.replica_id = -1;
  r.topics = {
      ListOffsetsTopic{"t", {ListOffsetsPartition{1, 5, kListOffsetsMaxTimestamp, {}}}, {}}};
  EXPECT_EQ(hex(encode_body(r, 7)),
            unspaced("ffffffff 00 02 02 74 02 00000001 00000005 fffffffffffffffd 00 00 00"));
}

TEST(ListOffsets, UnknownTagsSurviveARoundTrip) {
  ListOffsetsResponse r = full_response();
  r.unknown_tags = {RawTaggedField{0, {0x01}}, RawTaggedField{4, {}}};
  r.topics[0].partitions[0].unknown_tags = {RawTaggedField{2, {0xff, 0xfe}}};
  for (std::int16_t v = 6; v <= 7; ++v) expect_round_trip(r, v);
}

TEST(ListOffsets, VersionsOutsideTheRangeAreRefused) {
  const Bytes encoded = encode_body(full_request(), 1);
  for (std::int16_t v : {0, 8, 10}) {
    WireReader r(encoded);
    auto res = decode_body<ListOffsetsRequest>(r, v);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
  }
}

TEST(ListOffsets, NullTopicNameIsRefused) {
  Expect e(false);
  e.i32(4).array(1).null_str().array(0);
  WireReader r(e.bytes());
  auto res = decode_body<ListOffsetsResponse>(r, 2);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kNegativeLength);
  EXPECT_EQ(res.error().field, "topics[0].name");
}

// ---- golden vectors captured from real clients, when present ----

Bytes read_hex_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out;
  int hi = -1;
  for (char c : text) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) continue;
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(static_cast<std::uint8_t>(hi * 16 + d));
      hi = -1;
    }
  }
  return out;
}

// Skips a request header v1/v2 or a response header v0/v1 by hand; returns the
// body offset, or nothing if the header is malformed.
std::optional<std::size_t> body_offset(ByteView frame, bool request, bool flexible) {
  WireReader r(frame);
  if (request) {
    if (!r.read_int16() || !r.read_int16() || !r.read_int32()) return std::nullopt;
    auto len = r.read_int16();
    if (!len || (*len > 0 && !r.skip(static_cast<std::size_t>(*len)))) return std::nullopt;
  } else if (!r.read_int32()) {
    return std::nullopt;
  }
  if (flexible) {
    auto n = r.read_uvarint();
    if (!n) return std::nullopt;
    for (std::uint32_t i = 0; i < *n; ++i) {
      if (!r.read_uvarint()) return std::nullopt;  // tag
      auto size = r.read_uvarint();
      if (!size || !r.skip(*size)) return std::nullopt;
    }
  }
  return r.position();
}

template <Message M>
int check_golden_dir(const std::string& api, bool request) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(PP_SOURCE_DIR) / "tests/golden" / (api + (request ? "_request" : "_response"));
  int checked = 0;
  if (!fs::is_directory(dir)) return 0;
  for (const auto& vdir : fs::directory_iterator(dir)) {
    const std::string name = vdir.path().filename().string();
    if (!vdir.is_directory() || name.size() < 2 || name.size() > 6 || name[0] != 'v' ||
        name.find_first_not_of("0123456789", 1) != std::string::npos) {
      continue;
    }
    const auto version = static_cast<std::int16_t>(std::stoi(name.substr(1)));
    if (!M::kVersions.contains(version)) continue;
    for (const auto& file : fs::directory_iterator(vdir.path())) {
      if (file.path().extension() != ".hex") continue;
      SCOPED_TRACE(file.path().string());
      const Bytes frame = read_hex_file(file.path());
      ++checked;
      auto at = body_offset(frame, request, context_for<M>(version).flexible);
      EXPECT_TRUE(at.has_value()) << "malformed header";
      if (!at) continue;
      const ByteView body = ByteView(frame).subspan(*at);
      WireReader r(body);
      auto decoded = decode_body<M>(r, version);
      EXPECT_TRUE(decoded.has_value()) << decoded.error().describe();
      if (!decoded) continue;
      EXPECT_TRUE(r.empty()) << r.remaining() << " body bytes left over";
      EXPECT_EQ(hex(encode_body(*decoded, version)), hex(body));
    }
  }
  return checked;
}

TEST(ListOffsets, GoldenVectorsDecodeAndReencodeExactly) {
  const int n = check_golden_dir<ListOffsetsRequest>("list_offsets", true) +
                check_golden_dir<ListOffsetsResponse>("list_offsets", false);
  RecordProperty("golden_vectors", n);
  if (n == 0) GTEST_SKIP() << "no tests/golden/list_offsets_{request,response} vectors yet";
}

}  // namespace
}  // namespace pp
