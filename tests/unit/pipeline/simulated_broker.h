// An in-memory model of Kafka's broker-side idempotence (docs/design/PIPELINE.md D.1-D.3,
// 2.5-4.4 generation), answering the requests a ScriptedUpstream captured.
// Used for randomized fault runs: exactly once and in order, or a test fails.
#pragma once

#include <deque>
#include <map>
#include <random>

#include "proxy/records/record_batch.h"
#include "tests/unit/pipeline/scripted_upstream.h"

namespace pp::testing {

struct LoggedRecord {
  std::int64_t producer_id;
  std::int16_t epoch;
  std::int32_t sequence;
  std::string value;
};

class SimulatedBroker {
 public:
  struct Retained {
    std::int32_t first_seq;
    std::int32_t last_seq;
    std::int64_t first_offset;
  };
  struct ProducerEntry {
    std::int16_t epoch = -1;
    std::deque<Retained> batches;
  };
  struct Partition {
    std::vector<LoggedRecord> log;
    std::map<std::int64_t, ProducerEntry> producers;
    std::int32_t retain = 5;
    std::int32_t leader = 1;
    std::int32_t leader_epoch = 0;
    std::int64_t duplicates = 0;
  };

  std::map<TopicPartition, Partition> partitions;

  // Applies one batch as the leader would and says what it answers.
  PartitionAnswer append(std::int32_t node, const SentBatch& b) {
    Partition& p = partitions[b.tp];
    PartitionAnswer a;
    a.window = p.retain;
    if (node != p.leader) {
      a.error = ErrorCode::kNotLeaderOrFollower;
      a.current_leader = LeaderIdAndEpoch{p.leader, p.leader_epoch, {}};
      return a;
    }
    auto view = decode_record_batch(b.bytes);
    if (!view) {
      a.error = ErrorCode::kCorruptMessage;
      return a;
    }
    const std::int32_t last = b.base_sequence + b.record_count - 1;
    ProducerEntry& e = p.producers[b.producer_id];
    if (e.epoch == b.producer_epoch) {
      for (const auto& r : e.batches) {
        if (r.first_seq == b.base_sequence && r.last_seq == last) {
          ++p.duplicates;
          a.base_offset = r.first_offset;
          return a;
        }
      }
    }
    if (e.epoch >= 0 && b.producer_epoch < e.epoch) {
      a.error = ErrorCode::kInvalidProducerEpoch;
      return a;
    }
    if (e.epoch >= 0 && b.producer_epoch != e.epoch) {
      if (b.base_sequence != 0) {
        a.error = ErrorCode::kOutOfOrderSequenceNumber;
        return a;
      }
    } else if (!e.batches.empty()) {
      if (b.base_sequence != e.batches.back().last_seq + 1) {
        a.error = ErrorCode::kOutOfOrderSequenceNumber;
        return a;
      }
    }
    if (b.producer_epoch != e.epoch) e.batches.clear();
    e.epoch = b.producer_epoch;
    const std::int64_t offset = static_cast<std::int64_t>(p.log.size());
    for (std::size_t i = 0; i < view->records().size(); ++i) {
      const auto& r = view->records()[i];
      p.log.push_back(LoggedRecord{b.producer_id, b.producer_epoch, b.base_sequence + static_cast<std::int32_t>(i),
                                   std::string(r.value->begin(), r.value->end())});
    }
    e.batches.push_back(Retained{b.base_sequence, last, offset});
    while (e.batches.size() > static_cast<std::size_t>(p.retain)) e.batches.pop_front();
    a.base_offset = offset;
    return a;
  }

  MetadataUpdate metadata(const std::string& topic) const {
    TopicLeadership t;
    t.topic_id.bytes[0] = 7;
    for (const auto& [tp, p] : partitions) {
      if (tp.topic != topic) continue;
      if (t.partitions.size() <= static_cast<std::size_t>(tp.partition)) t.partitions.resize(tp.partition + 1);
      t.partitions[tp.partition] = PartitionLeadership{ErrorCode::kNone, p.leader, p.leader_epoch};
    }
    return MetadataUpdate{{{topic, t}}};
  }
};

}  // namespace pp::testing
