// Test support: builds a value of any described message with every field set to
// a non-default value, and the value a decoder must produce for a version (the
// fields that version lacks back at their defaults). Derived from the same
// field lists as the codec, so every (message, version) is covered without a
// hand-written case.
#pragma once

#include <string>

#include "proxy/protocol/schema.h"

namespace pp::testing {

class ValueFiller {
 public:
  explicit ValueFiller(std::uint32_t seed) : state_(seed * 2654435761u + 1) {}

  template <class T>
  void fill(T& v, bool nullable) {
    using namespace schema_detail;
    if constexpr (IsOptional<T>::value) {
      if (nullable && next() % 3 == 0) {
        v.reset();
      } else {
        v.emplace();
        fill(*v, false);
      }
    } else if constexpr (std::is_same_v<T, RecordsView>) {
      if (nullable && next() % 4 == 0) {
        v.data.reset();
      } else {
        static const Bytes kPayload = [] {
          Bytes b(37);
          for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7);
          return b;
        }();
        v.data = ByteView(kPayload).first(next() % kPayload.size());
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      v = true;
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(1 + next() % 100);
    } else if constexpr (Strong<T>) {
      fill(v.value, false);
    } else if constexpr (std::is_integral_v<T>) {
      // Non-default (defaults are 0 and -1): avoid both, and vary magnitude so
      // varints of several widths appear.
      v = static_cast<T>(2 + next() % 1000);
    } else if constexpr (std::is_same_v<T, double>) {
      v = 0.5 + next() % 10;
    } else if constexpr (std::is_same_v<T, Uuid>) {
      for (auto& b : v.bytes) b = static_cast<std::uint8_t>(next());
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = "s" + std::to_string(next() % 100000);
    } else if constexpr (std::is_same_v<T, Bytes>) {
      v.assign(1 + next() % 9, static_cast<std::uint8_t>(next()));
    } else if constexpr (IsVector<T>::value) {
      v.resize(1 + next() % 2);
      for (auto& e : v) fill(e, false);
    } else if constexpr (Described<T>) {
      std::apply([&](const auto&... f) { (fill(v.*(f.member), true), ...); }, T::fields());
      if constexpr (HasUnknownTags<T>) {
        // A tag no version defines, to check unknown tags survive a round trip.
        v.unknown_tags = {RawTaggedField{90 + next() % 5, Bytes{1, 2, 3}}};
      }
    }
  }

 private:
  std::uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  std::uint32_t state_;
};

// What a decoder yields at context c for a value the encoder was given.
template <class T>
void normalize(T& v, bool nullable, SchemaContext c) {
  using namespace schema_detail;
  if constexpr (IsOptional<T>::value) {
    if (!v && !nullable) v.emplace();  // the encoder writes "empty" for null
    if (v) normalize(*v, false, c);
  } else if constexpr (IsVector<T>::value) {
    for (auto& e : v) normalize(e, false, c);
  } else if constexpr (std::is_same_v<T, RecordsView>) {
    if (!v.data && !nullable) v.data = ByteView();
  } else if constexpr (Described<T>) {
    static const T kDefaults{};
    std::apply(
        [&](const auto&... f) {
          (([&] {
             if (!f.versions.contains(c.version)) {
               v.*(f.member) = kDefaults.*(f.member);
             } else {
               normalize(v.*(f.member), f.nullable.contains(c.version), c);
             }
           }()),
           ...);
        },
        T::fields());
    if constexpr (HasUnknownTags<T>) {
      if (!c.flexible) v.unknown_tags.clear();
    }
  }
}

}  // namespace pp::testing
