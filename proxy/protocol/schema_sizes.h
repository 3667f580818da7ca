// The fewest bytes a value of a described type can take on the wire, for
// checking peer counts before anything is allocated. Include schema.h, not
// this file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "proxy/protocol/schema.h"

namespace pp {

// The fewest bytes a value of T can take at context c. Array counts are
// checked against it, so a hostile count cannot make the decoder allocate
// more than a small multiple of the bytes the peer actually sent.
template <class T>
constexpr std::size_t min_wire_size(SchemaContext c) {
  using namespace schema_detail;
  if constexpr (IsOptional<T>::value) {
    // The smaller of the inner value and a null, which is a length prefix of
    // the inner type's width: a nullable string's null is an int16 (2 bytes),
    // so a count of 1-byte names must not be judged by 4 bytes each.
    using Inner = typename T::value_type;
    const std::size_t null_size = c.flexible ? 1 : (kWideLength<Inner> ? 4 : 2);
    return std::min(min_wire_size<Inner>(c), null_size);
  } else if constexpr (std::is_same_v<T, RecordsView> || std::is_same_v<T, Bytes> || IsVector<T>::value) {
    return c.flexible ? 1 : 4;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return c.flexible ? 1 : 2;
  } else if constexpr (std::is_same_v<T, Uuid>) {
    return 16;
  } else if constexpr (std::is_enum_v<T>) {
    return sizeof(std::underlying_type_t<T>);
  } else if constexpr (Strong<T>) {
    return sizeof(typename T::rep_type);
  } else if constexpr (Described<T>) {
    std::size_t total = c.flexible ? 1 : 0;
    std::apply(
        [&](const auto&... f) {
          ((total += (f.versions.contains(c.version) && !f.is_tagged_in(c.version))
                         ? min_wire_size<std::remove_cvref_t<decltype(std::declval<T>().*(f.member))>>(c)
                         : 0),
           ...);
        },
        T::fields());
    return total;
  } else {
    return sizeof(T);
  }
}

}  // namespace pp
