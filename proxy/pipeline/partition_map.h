// Every partition the idempotent producer has state for, by (topic,
// partition). The IdempotentProducer owns the map and creates and retires its
// entries; the parts it wires (Sender, ResponseHandler, EpochBumper,
// IdlePartitions, BatchCompletion) are lent it. Loop thread only.
#pragma once

#include <memory>
#include <unordered_map>

#include "proxy/pipeline/partition_state.h"
#include "proxy/pipeline/topic_partition.h"

namespace pp {

using PartitionMap = std::unordered_map<TopicPartition, std::unique_ptr<PartitionState>, TopicPartitionHash>;

}  // namespace pp
