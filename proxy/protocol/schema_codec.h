// Encode and decode for every version, derived from the field lists that
// proxy/protocol/schema.h describes. Include schema.h, not this file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "proxy/protocol/schema.h"
#include "proxy/protocol/schema_sizes.h"

namespace pp {

// At most this many unknown tagged fields in one tagged-field section; more is
// a decode error (kTooMany). Kafka's schemas give a struct a handful of tags
// (ApiVersionsResponse has the most today, 4), and a peer some releases newer
// than us adds a few more; 64 is ten times what any real writer sends. Unknown
// payloads are copied (so a round trip keeps them), and without a cap a
// section of 200,000 empty tags is 200,000 allocations for 800 KB of input.
inline constexpr std::size_t kMaxUnknownTaggedFields = 64;

template <class T>
void encode_value(WireWriter& w, const T& v, bool nullable, SchemaContext c);
template <class T>
Decoded<void> decode_value(WireReader& r, T& out, bool nullable, SchemaContext c);

template <schema_detail::Described T>
void encode_struct(WireWriter& w, const T& v, SchemaContext c);
template <schema_detail::Described T>
Decoded<void> decode_struct(WireReader& r, T& out, SchemaContext c);

inline void encode_records(WireWriter& w, const RecordsView& v, bool nullable, SchemaContext c) {
  if (v.pieces != nullptr) {
    w.length(v.pieces->size(), c.flexible, true);
    w.payload(*v.pieces, v.owner);
  } else if (v.data) {
    w.length(v.data->size(), c.flexible, true);
    w.payload(*v.data, v.owner);
  } else if (nullable) {
    w.null_length(c.flexible, true);
  } else {
    w.length(0, c.flexible, true);
  }
}

template <class T>
void encode_value(WireWriter& w, const T& v, bool nullable, SchemaContext c) {
  using namespace schema_detail;
  if constexpr (IsOptional<T>::value) {
    using Inner = typename T::value_type;
    if (v) {
      encode_value(w, *v, false, c);
    } else if (nullable) {
      w.null_length(c.flexible, kWideLength<Inner>);
    } else {
      encode_value(w, Inner{}, false, c);  // not nullable in this version: empty
    }
  } else if constexpr (std::is_same_v<T, RecordsView>) {
    encode_records(w, v, nullable, c);
  } else if constexpr (std::is_same_v<T, bool>) {
    w.boolean(v);
  } else if constexpr (std::is_enum_v<T>) {
    encode_value(w, static_cast<std::underlying_type_t<T>>(v), nullable, c);
  } else if constexpr (Strong<T>) {
    encode_value(w, v.value, nullable, c);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    w.int8(v);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    w.int16(v);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    w.uint16(v);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    w.int32(v);
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    w.uint32(v);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    w.int64(v);
  } else if constexpr (std::is_same_v<T, double>) {
    w.float64(v);
  } else if constexpr (std::is_same_v<T, Uuid>) {
    w.raw(ByteView(v.bytes));
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.length(v.size(), c.flexible, false);
    w.raw(std::string_view(v));
  } else if constexpr (std::is_same_v<T, Bytes>) {
    w.length(v.size(), c.flexible, true);
    w.raw(ByteView(v));
  } else if constexpr (IsVector<T>::value) {
    w.length(v.size(), c.flexible, true);
    for (const auto& e : v) encode_value(w, e, false, c);
  } else if constexpr (Described<T>) {
    encode_struct(w, v, c);
  } else {
    static_assert(sizeof(T) == 0, "type has no Kafka wire encoding");
  }
}

namespace schema_detail {

template <class T>
Decoded<void> decode_optional(WireReader& r, std::optional<T>& out, bool nullable, SchemaContext c) {
  // Peek the length prefix: null is only legal where the field is nullable.
  WireReader peek = r;
  auto len = peek.read_length(c.flexible, kWideLength<T>);
  if (!len) return std::unexpected(len.error());
  if (!*len) {
    if (!nullable) return r.fail(DecodeErrorKind::kNegativeLength);
    r = peek;
    out.reset();
    return {};
  }
  T inner{};
  auto res = decode_value(r, inner, false, c);
  if (!res) return res;
  out = std::move(inner);
  return {};
}

inline Decoded<void> decode_records(WireReader& r, RecordsView& out, bool nullable, SchemaContext c) {
  auto len = r.read_length(c.flexible, true);
  if (!len) return std::unexpected(len.error());
  if (!*len) {
    if (!nullable) return r.fail(DecodeErrorKind::kNegativeLength);
    out.data.reset();
    return {};
  }
  auto span = r.read_span(**len);
  if (!span) return std::unexpected(span.error());
  out.data = *span;
  return {};
}

// A non-null string or bytes: a length, then that many bytes, copied.
template <class T>
Decoded<void> decode_sized(WireReader& r, T& out, SchemaContext c) {
  auto len = r.read_length(c.flexible, kWideLength<T>);
  if (!len) return std::unexpected(len.error());
  if (!*len) return r.fail(DecodeErrorKind::kNegativeLength);
  auto span = r.read_span(**len);
  if (!span) return std::unexpected(span.error());
  out.assign(span->begin(), span->end());
  return {};
}

// A count the remaining bytes cannot hold is refused before anything is
// allocated for it.
template <class E>
Decoded<void> decode_array(WireReader& r, std::vector<E>& out, SchemaContext c) {
  auto len = r.read_length(c.flexible, true);
  if (!len) return std::unexpected(len.error());
  if (!*len) return r.fail(DecodeErrorKind::kNegativeLength);
  const std::size_t element_min = std::max<std::size_t>(1, min_wire_size<E>(c));
  if (**len > r.remaining() / element_min) return r.fail(DecodeErrorKind::kLengthTooLarge);
  out.clear();
  out.reserve(**len);
  for (std::size_t i = 0; i < **len; ++i) {
    auto& e = out.emplace_back();
    auto res = decode_value(r, e, false, c);
    if (!res) {
      DecodeError err = res.error();
      err.within("[" + std::to_string(i) + "]");
      return std::unexpected(std::move(err));
    }
  }
  return {};
}

}  // namespace schema_detail

template <class T>
Decoded<void> decode_value(WireReader& r, T& out, bool nullable, SchemaContext c) {
  using namespace schema_detail;
  auto assign = [&out](auto decoded) -> Decoded<void> {
    if (!decoded) return std::unexpected(decoded.error());
    out = static_cast<T>(*decoded);
    return {};
  };
  if constexpr (IsOptional<T>::value) {
    return decode_optional(r, out, nullable, c);
  } else if constexpr (std::is_same_v<T, RecordsView>) {
    return decode_records(r, out, nullable, c);
  } else if constexpr (std::is_same_v<T, bool>) {
    return assign(r.read_bool());
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> raw{};
    auto res = decode_value(r, raw, nullable, c);
    if (res) out = static_cast<T>(raw);
    return res;
  } else if constexpr (Strong<T>) {
    return decode_value(r, out.value, nullable, c);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return assign(r.read_int8());
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return assign(r.read_int16());
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return assign(r.read_uint16());
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return assign(r.read_int32());
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    return assign(r.read_uint32());
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return assign(r.read_int64());
  } else if constexpr (std::is_same_v<T, double>) {
    return assign(r.read_float64());
  } else if constexpr (std::is_same_v<T, Uuid>) {
    auto span = r.read_span(16);
    if (!span) return std::unexpected(span.error());
    std::copy(span->begin(), span->end(), out.bytes.begin());
    return {};
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes>) {
    return decode_sized(r, out, c);
  } else if constexpr (IsVector<T>::value) {
    return decode_array(r, out, c);
  } else if constexpr (Described<T>) {
    return decode_struct(r, out, c);
  } else {
    static_assert(sizeof(T) == 0, "type has no Kafka wire decoding");
  }
}

template <schema_detail::Described T>
void encode_struct(WireWriter& w, const T& v, SchemaContext c) {
  constexpr auto fields = T::fields();
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (f.versions.contains(c.version) && !f.is_tagged_in(c.version)) {
             encode_value(w, v.*(f.member), f.nullable.contains(c.version), c);
           }
         }()),
         ...);
      },
      fields);
  if (!c.flexible) return;

  // Tagged fields in ascending tag order, known ones only when not default.
  static const T kDefaults{};
  RawTaggedFields present;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (f.versions.contains(c.version) && f.is_tagged_in(c.version) &&
               !(v.*(f.member) == kDefaults.*(f.member))) {
             RawTaggedField t{static_cast<std::uint32_t>(f.tag), {}};
             WireWriter tw(t.data);
             encode_value(tw, v.*(f.member), f.nullable.contains(c.version), c);
             present.push_back(std::move(t));
           }
         }()),
         ...);
      },
      fields);
  if constexpr (schema_detail::HasUnknownTags<T>) {
    present.insert(present.end(), v.unknown_tags.begin(), v.unknown_tags.end());
  }
  std::stable_sort(present.begin(), present.end(), [](const auto& a, const auto& b) { return a.tag < b.tag; });
  w.uvarint(static_cast<std::uint32_t>(present.size()));
  for (const auto& t : present) {
    w.uvarint(t.tag);
    w.uvarint(static_cast<std::uint32_t>(t.data.size()));
    w.raw(ByteView(t.data));
  }
}

namespace schema_detail {

// Decodes one tagged field's payload into the known member with that tag at
// c; false when T has no such tagged field (the tag is unknown to us).
template <Described T>
Decoded<bool> decode_known_tag(T& out, std::uint32_t tag, ByteView payload, std::size_t at, SchemaContext c) {
  bool known = false;
  std::optional<DecodeError> err;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (known || f.tag != static_cast<std::int32_t>(tag) || !f.versions.contains(c.version) ||
               !f.is_tagged_in(c.version)) {
             return;
           }
           known = true;
           WireReader sub(payload, at);
           auto res = decode_value(sub, out.*(f.member), f.nullable.contains(c.version), c);
           if (!res) {
             err = std::move(res.error().within(f.name));
           } else if (!sub.empty()) {
             err = DecodeError{DecodeErrorKind::kTrailingBytes, sub.offset(), std::string(f.name)};
           }
         }()),
         ...);
      },
      T::fields());
  if (err) return std::unexpected(std::move(*err));
  return known;
}

inline std::unexpected<DecodeError> tagged_fields_error(DecodeErrorKind kind, std::size_t at) {
  return std::unexpected(DecodeError{kind, at, "_tagged_fields"});
}

// A struct's TAGGED_FIELDS section (KIP-482): a count, then (tag, size,
// payload) in strictly increasing tag order, as KIP-482 has writers send them.
// Kafka's Java readers do not check the order; we do, because with it a
// section decodes in one pass, unknown fields are appended already sorted
// (the order encode_struct writes) and a repeated tag cannot overwrite a known
// field. Linear in the section's bytes; unknown fields capped per section.
template <Described T>
Decoded<void> decode_tagged_fields(WireReader& r, T& out, SchemaContext c) {
  auto count = r.read_uvarint();
  if (!count) return std::unexpected(count.error().within("_tagged_fields"));
  if (*count > r.remaining()) return r.fail(DecodeErrorKind::kLengthTooLarge);
  std::int64_t previous = -1;
  std::size_t unknown = 0;
  for (std::uint32_t i = 0; i < *count; ++i) {
    const std::size_t tag_at = r.offset();
    auto tag = r.read_uvarint();
    if (!tag) return std::unexpected(tag.error().within("_tagged_fields"));
    if (static_cast<std::int64_t>(*tag) <= previous) return tagged_fields_error(DecodeErrorKind::kOutOfOrder, tag_at);
    previous = *tag;
    auto size = r.read_uvarint();
    if (!size) return std::unexpected(size.error().within("_tagged_fields"));
    const std::size_t at = r.offset();
    auto payload = r.read_span(*size);
    if (!payload) return std::unexpected(payload.error().within("_tagged_fields"));
    auto known = decode_known_tag(out, *tag, *payload, at, c);
    if (!known) return std::unexpected(std::move(known).error());
    if (*known) continue;
    if (++unknown > kMaxUnknownTaggedFields) return tagged_fields_error(DecodeErrorKind::kTooMany, tag_at);
    if constexpr (HasUnknownTags<T>) {
      out.unknown_tags.push_back(RawTaggedField{*tag, Bytes(payload->begin(), payload->end())});
    }
  }
  return {};
}

}  // namespace schema_detail

template <schema_detail::Described T>
Decoded<void> decode_struct(WireReader& r, T& out, SchemaContext c) {
  constexpr auto fields = T::fields();
  std::optional<DecodeError> err;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (err || !f.versions.contains(c.version) || f.is_tagged_in(c.version)) return;
           auto res = decode_value(r, out.*(f.member), f.nullable.contains(c.version), c);
           if (!res) err = std::move(res.error().within(f.name));
         }()),
         ...);
      },
      fields);
  if (err) return std::unexpected(std::move(*err));
  if (!c.flexible) return {};
  return schema_detail::decode_tagged_fields(r, out, c);
}

// ---- whole message bodies ----

template <class M>
concept Message = schema_detail::Described<M> && requires {
  M::kApiKey;
  M::kVersions;
  M::kFlexibleSince;
};

template <Message M>
constexpr SchemaContext context_for(std::int16_t version) {
  return SchemaContext{version, version >= M::kFlexibleSince};
}

template <Message M>
void encode_body(WireWriter& w, const M& m, std::int16_t version) {
  encode_struct(w, m, context_for<M>(version));
}

template <Message M>
Bytes encode_body(const M& m, std::int16_t version) {
  Bytes out;
  WireWriter w(out);
  encode_body(w, m, version);
  return out;
}

// Decodes one message body at `version`; the reader is left just after it, so
// callers decide whether trailing bytes are an error.
template <Message M>
Decoded<M> decode_body(WireReader& r, std::int16_t version) {
  if (!M::kVersions.contains(version)) return r.fail(DecodeErrorKind::kUnsupported);
  M m{};
  auto res = decode_struct(r, m, context_for<M>(version));
  if (!res) return std::unexpected(res.error());
  return m;
}

}  // namespace pp
