// InitProducerId v0-v5 (proxy/protocol/messages/init_producer_id.h). Expected
// bytes are written out field by field from InitProducerIdRequest.json /
// InitProducerIdResponse.json, independently of the schema.
#include "proxy/protocol/messages/init_producer_id.h"

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

// ---- fixtures: every field set, per JSON ----

InitProducerIdRequest full_request() {
  InitProducerIdRequest r;
  r.transactional_id = "txn-1";
  r.transaction_timeout_ms = 60000;
  r.producer_id = ProducerId{1000};
  r.producer_epoch = ProducerEpoch{5};
  return r;
}

Bytes expected_request(std::int16_t v, bool null_id) {
  Expect e(v >= 2);
  if (null_id) {
    e.null_str();
  } else {
    e.str("txn-1");
  }
  e.i32(60000);
  if (v >= 3) e.i64(1000).i16(5);
  e.no_tags();
  return e.bytes();
}

InitProducerIdResponse full_response() {
  InitProducerIdResponse r;
  r.throttle_time_ms = 20;
  r.error_code = ErrorCode::kProducerFenced;
  r.producer_id = ProducerId{0x0102030405060708};
  r.producer_epoch = ProducerEpoch{32767};
  return r;
}

Bytes expected_response(std::int16_t v) {
  Expect e(v >= 2);
  e.i32(20).i16(90).i64(0x0102030405060708).i16(32767).no_tags();
  return e.bytes();
}

// ---- tests ----

TEST(InitProducerId, VersionRange) {
  EXPECT_EQ(InitProducerIdRequest::kApiKey, ApiKey::kInitProducerId);
  EXPECT_EQ(InitProducerIdResponse::kApiKey, ApiKey::kInitProducerId);
  EXPECT_EQ(InitProducerIdRequest::kVersions.min, 0);
  EXPECT_EQ(InitProducerIdRequest::kVersions.max, 5);
  EXPECT_EQ(InitProducerIdResponse::kVersions.min, 0);
  EXPECT_EQ(InitProducerIdResponse::kVersions.max, 5);
  EXPECT_EQ(InitProducerIdRequest::kFlexibleSince, 2);
  EXPECT_EQ(InitProducerIdResponse::kFlexibleSince, 2);
}

TEST(InitProducerId, DefaultsAreKafkas) {
  const InitProducerIdRequest q;
  EXPECT_EQ(q.transactional_id, std::optional<std::string>(""));  // generated default, not null
  EXPECT_EQ(q.producer_id, kNoProducerId);
  EXPECT_EQ(q.producer_epoch, kNoProducerEpoch);
  const InitProducerIdResponse r;
  EXPECT_EQ(r.producer_id, kNoProducerId);
  EXPECT_EQ(r.producer_epoch, ProducerEpoch{0});
}

TEST(InitProducerId, RequestEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 0; v <= 5; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const InitProducerIdRequest value = at_version(full_request(), v);
    expect_all_set(value, v, "InitProducerIdRequest");
    EXPECT_EQ(hex(expect_round_trip(value, v)), hex(expected_request(v, false)));

    InitProducerIdRequest idempotent = value;
    idempotent.transactional_id.reset();
    EXPECT_EQ(hex(expect_round_trip(idempotent, v)), hex(expected_request(v, true)));
  }
}

TEST(InitProducerId, ResponseEveryVersionMatchesHandWrittenBytes) {
  for (std::int16_t v = 0; v <= 5; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    const InitProducerIdResponse value = at_version(full_response(), v);
    expect_all_set(value, v, "InitProducerIdResponse");
    EXPECT_EQ(hex(expect_round_trip(value, v)), hex(expected_response(v)));
  }
}

TEST(InitProducerId, IdempotentRequestsByHand) {
  // What this proxy sends: no transactional id, the largest timeout.
  InitProducerIdRequest r;
  r.transactional_id.reset();
  r.transaction_timeout_ms = 0x7fffffff;
  EXPECT_EQ(hex(encode_body(r, 0)), "ffff7fffffff");
  EXPECT_EQ(hex(encode_body(r, 1)), "ffff7fffffff");
  // v2: compact null string (0), then an empty tag section.
  EXPECT_EQ(hex(encode_body(r, 2)), "007fffffff00");
  // v3 (KIP-360): producer id and epoch, both -1 when not resuming.
  EXPECT_EQ(hex(encode_body(r, 3)), unspaced("007fffffff ffffffffffffffff ffff 00"));
  // A set id and epoch are dropped below v3, where the fields do not exist.
  r.producer_id = ProducerId{7};
  r.producer_epoch = ProducerEpoch{1};
  EXPECT_EQ(hex(encode_body(r, 2)), "007fffffff00");
  EXPECT_EQ(hex(encode_body(r, 5)), unspaced("007fffffff 0000000000000007 0001 00"));
}

TEST(InitProducerId, ResponseV0ByHand) {
  // throttle 0, NONE, producer id 4096, epoch 0.
  const Bytes wire = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0};
  WireReader r(wire);
  auto decoded = decode_body<InitProducerIdResponse>(r, 0);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(decoded->error_code, ErrorCode::kNone);
  EXPECT_EQ(decoded->producer_id, ProducerId{4096});
  EXPECT_EQ(decoded->producer_epoch, ProducerEpoch{0});
}

TEST(InitProducerId, UnknownTagsSurviveARoundTrip) {
  InitProducerIdRequest q = full_request();
  q.unknown_tags = {RawTaggedField{0, {0x01}}, RawTaggedField{3, {0x02, 0x03}}};
  InitProducerIdResponse r = full_response();
  r.unknown_tags = {RawTaggedField{1, {}}};
  for (std::int16_t v = 2; v <= 5; ++v) {
    expect_round_trip(at_version(q, v), v);
    expect_round_trip(at_version(r, v), v);
  }
}

TEST(InitProducerId, VersionsOutsideTheRangeAreRefused) {
  const Bytes encoded = encode_body(full_request(), 5);
  for (std::int16_t v : {-1, 6}) {
    WireReader r(encoded);
    auto res = decode_body<InitProducerIdRequest>(r, v);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
  }
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

TEST(InitProducerId, GoldenVectorsDecodeAndReencodeExactly) {
  const int n = check_golden_dir<InitProducerIdRequest>("init_producer_id", true) +
                check_golden_dir<InitProducerIdResponse>("init_producer_id", false);
  RecordProperty("golden_vectors", n);
  if (n == 0) GTEST_SKIP() << "no tests/golden/init_producer_id_{request,response} vectors yet";
}

TEST(InitProducerId, GoldenLibrdkafkaIdempotentRequest) {
  // librdkafka 2.0.2 (confluent-kafka 1.7.0), enable.idempotence=true: its .json
  // says null id, timeout -1 (not the broker's max), no id/epoch to resume.
  const std::filesystem::path path =
      std::filesystem::path(PP_SOURCE_DIR) /
      "tests/golden/init_producer_id_request/v4/confluent_kafka_idempotent_none.hex";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "vector not captured yet";
  const Bytes frame = read_hex_file(path);
  auto at = body_offset(frame, true, true);
  ASSERT_TRUE(at.has_value());
  WireReader r(ByteView(frame).subspan(*at));
  auto decoded = decode_body<InitProducerIdRequest>(r, 4);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(decoded->transactional_id.has_value());
  EXPECT_EQ(decoded->transaction_timeout_ms, -1);
  EXPECT_EQ(decoded->producer_id, kNoProducerId);
  EXPECT_EQ(decoded->producer_epoch, kNoProducerEpoch);
}

}  // namespace
}  // namespace pp
