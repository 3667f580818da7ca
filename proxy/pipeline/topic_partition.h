// (topic, partition): the key of all per-partition state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace pp {

struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
  std::string to_string() const { return topic + "-" + std::to_string(partition); }
};

struct TopicPartitionHash {
  std::size_t operator()(const TopicPartition& tp) const {
    return std::hash<std::string>{}(tp.topic) * 31 + static_cast<std::size_t>(tp.partition);
  }
};

}  // namespace pp
