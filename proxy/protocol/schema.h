// Kafka messages described once, as data. Each message or nested struct lists
// its fields with the versions they exist in (and where they are nullable or
// tagged); encode and decode for every version are derived from that list, so
// there is no hand-written per-version code ("Each Kafka message is described
// once, as data", docs/design/ARCHITECTURE.md, habits).
//
// A described struct provides:
//   static constexpr auto fields() { return std::tuple{field("x", &S::x, since(3)), ...}; }
// Messages additionally provide kApiKey, kVersions and kFlexibleSince.
// Members absent from a version keep their default member initialiser, which
// is also the value a tagged field is omitted at (KIP-482: defaults are not
// serialised). A member `RawTaggedFields unknown_tags` keeps tags we don't know
// so a decode/encode round trip preserves them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "proxy/base/bytes.h"
#include "proxy/base/wire_frame.h"
#include "proxy/protocol/types.h"
#include "proxy/protocol/wire_reader.h"
#include "proxy/protocol/wire_writer.h"

namespace pp {

inline constexpr std::int16_t kMaxVersion = 0x7fff;

struct Versions {
  std::int16_t min = 0;
  std::int16_t max = -1;  // empty when max < min

  constexpr bool contains(std::int16_t v) const { return v >= min && v <= max; }
  constexpr bool empty() const { return max < min; }
};
constexpr Versions since(std::int16_t v) {
  return {v, kMaxVersion};
}
constexpr Versions between(std::int16_t lo, std::int16_t hi) {
  return {lo, hi};
}
inline constexpr Versions kNever{0, -1};
inline constexpr Versions kAll{0, kMaxVersion};

struct RawTaggedField {
  std::uint32_t tag = 0;
  Bytes data;
  bool operator==(const RawTaggedField&) const = default;
};
using RawTaggedFields = std::vector<RawTaggedField>;

// A RECORDS payload borrowed from the frame it was decoded from (no copy of
// what can be megabytes); the frame must outlive it. Encoding copies it,
// unless it has an `owner` and the writer builds a WireFrame: then the
// frame borrows the bytes and keeps `owner` until they are written.
// To encode a payload in several pieces (an upstream batch that borrows a
// client's records), `pieces` is set instead of `data`, and `owner` keeps
// it alive; decoding never sets it.
struct RecordsView {
  std::optional<ByteView> data;
  std::shared_ptr<const void> owner;
  const WireFrame* pieces = nullptr;

  bool present() const { return pieces != nullptr || data.has_value(); }
  std::size_t size() const { return pieces != nullptr ? pieces->size() : (data ? data->size() : 0); }
  // The bytes as one buffer (tests and fakes that read what was sent).
  Bytes flatten() const {
    if (pieces != nullptr) return pieces->flatten();
    const ByteView bytes = data.value_or(ByteView{});
    return Bytes(bytes.begin(), bytes.end());
  }

  bool operator==(const RecordsView& o) const {
    if (present() != o.present()) return false;
    if (pieces == nullptr && o.pieces == nullptr) return !data || bytes_equal(*data, *o.data);
    return flatten() == o.flatten();
  }
};

template <class Owner, class T>
struct Field {
  std::string_view name;
  T Owner::*member;
  Versions versions;
  Versions nullable = kNever;
  std::int32_t tag = -1;
  Versions tagged = kNever;

  constexpr Field nullable_in(Versions v) const {
    Field f = *this;
    f.nullable = v;
    return f;
  }
  // A tagged field (KIP-482): `tag` in the struct's tagged-fields section.
  constexpr Field tagged_as(std::int32_t t, Versions v) const {
    Field f = *this;
    f.tag = t;
    f.tagged = v;
    return f;
  }
  constexpr bool is_tagged_in(std::int16_t v) const { return tag >= 0 && tagged.contains(v); }
};

template <class Owner, class T>
constexpr Field<Owner, T> field(std::string_view name, T Owner::*member, Versions versions) {
  return Field<Owner, T>{name, member, versions};
}

struct SchemaContext {
  std::int16_t version;
  bool flexible;  // compact lengths and tagged-field sections (KIP-482)
};

namespace schema_detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <>
struct IsVector<Bytes> : std::false_type {};

template <class T>
concept Described = requires { T::fields(); };
template <class T>
concept Strong = requires(T t) {
  typename T::rep_type;
  t.value;
};
template <class T>
concept HasUnknownTags = requires(T t) {
  { t.unknown_tags } -> std::same_as<RawTaggedFields&>;
};

// Strings use an int16 classic length; bytes, records and arrays an int32.
template <class T>
constexpr bool kWideLength = !std::is_same_v<T, std::string>;

}  // namespace schema_detail

}  // namespace pp

// How the descriptions become bytes and back.
#include "proxy/protocol/schema_codec.h"
#include "proxy/protocol/schema_sizes.h"
