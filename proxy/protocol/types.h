// Strong types for the ids Kafka passes around, so a sequence can't be passed
// where a partition is expected. The wire codec sees through them (schema.h).
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
using Sequence = StrongInt<struct SequenceTag, std::int32_t>;
using PartitionId = StrongInt<struct PartitionIdTag, std::int32_t>;
using NodeId = StrongInt<struct NodeIdTag, std::int32_t>;
using LeaderEpoch = StrongInt<struct LeaderEpochTag, std::int32_t>;
using CorrelationId = StrongInt<struct CorrelationIdTag, std::int32_t>;

inline constexpr ProducerId kNoProducerId{-1};
inline constexpr ProducerEpoch kNoProducerEpoch{-1};
inline constexpr Sequence kNoSequence{-1};
inline constexpr NodeId kNoNode{-1};
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};

// Kafka's Uuid (KIP-516): 16 raw bytes on the wire; all zero is Uuid.ZERO_UUID.
struct Uuid {
  std::array<std::uint8_t, 16> bytes{};

  constexpr auto operator<=>(const Uuid&) const = default;
  bool is_zero() const;
  // URL-safe base64 without padding, as Kafka prints topic ids.
  std::string to_string() const;
};

}  // namespace pp
