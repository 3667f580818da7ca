// Strong types for the producer identity, the one pair of ids that travels
// through every layer together (a bare int16 epoch next to an int64 id is
// easy to swap). Partition, node, leader epoch and sequence stay plain
// int32 as Kafka's own code keeps them: they are compared, stepped and
// wrapped arithmetically everywhere, and the pipeline names them in every
// field. The wire codec sees through StrongInt (schema.h).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>

namespace pp {

template <class Tag, class Rep>
struct StrongInt {
  using rep_type = Rep;
  Rep value{};

  constexpr StrongInt() = default;
  constexpr explicit StrongInt(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongInt&) const = default;
};

using ProducerId = StrongInt<struct ProducerIdTag, std::int64_t>;
using ProducerEpoch = StrongInt<struct ProducerEpochTag, std::int16_t>;

inline constexpr ProducerId kNoProducerId{-1};
inline constexpr ProducerEpoch kNoProducerEpoch{-1};

// Kafka's Uuid (KIP-516): 16 raw bytes on the wire; all zero is Uuid.ZERO_UUID.
struct Uuid {
  std::array<std::uint8_t, 16> bytes{};

  constexpr auto operator<=>(const Uuid&) const = default;
  bool is_zero() const;
  // URL-safe base64 without padding, as Kafka prints topic ids.
  std::string to_string() const;
};

}  // namespace pp
