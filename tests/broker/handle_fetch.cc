// Fetch and ListOffsets: enough for real consumers (kcat / librdkafka,
// kafka-python) to read every partition from the beginning. Batches are
// served exactly as stored. No fetch sessions (KIP-227): session id 0 is
// always answered sessionless, which Kafka also does when its cache is full.
#include <algorithm>

#include "tests/broker/handlers.h"

namespace pp::test_broker {

namespace {

// KIP-320 fencing: a client's leader epoch that is older than ours is
// FENCED_LEADER_EPOCH, newer is UNKNOWN_LEADER_EPOCH; -1 skips the check.
std::optional<ErrorCode> check_leader_epoch(const Partition& p, std::int32_t client_epoch) {
  if (client_epoch < 0 || client_epoch == p.leader_epoch) return std::nullopt;
  return client_epoch < p.leader_epoch ? ErrorCode::kFencedLeaderEpoch : ErrorCode::kUnknownLeaderEpoch;
}

Partition* find_partition(ClusterState& cluster, const std::string& topic, std::int32_t index) {
  return cluster.partition(topic, index);
}

}  // namespace

FetchResult handle_fetch(ClusterState& cluster, BrokerId self, const FetchRequest& request, std::int16_t version) {
  FetchResult out;
  if (version >= 7 && request.session_id != 0) {
    out.response.error_code = ErrorCode::kFetchSessionIdNotFound;  // we never hand one out
    out.has_error = true;
    return out;
  }
  const std::size_t budget = static_cast<std::size_t>(std::max(request.max_bytes, 0));
  for (const auto& ft : request.topics) {
    FetchableTopicResponse tr;
    tr.topic = ft.topic;
    for (const auto& fp : ft.partitions) {
      FetchPartitionData pd;
      pd.partition_index = fp.partition;
      // Kafka sends null aborted transactions to read_uncommitted consumers.
      if (request.isolation_level == 0) pd.aborted_transactions.reset();
      pd.high_watermark = -1;
      pd.last_stable_offset = -1;
      pd.log_start_offset = -1;
      auto& buffer = out.buffers.emplace_back(std::make_unique<Bytes>());
      pd.records.data = ByteView(*buffer);

      Partition* p = find_partition(cluster, ft.topic, fp.partition);
      std::optional<ErrorCode> error;
      if (!p) {
        error = ErrorCode::kUnknownTopicOrPartition;
      } else if (p->leader != self) {
        error = ErrorCode::kNotLeaderOrFollower;
        if (version >= 12) pd.current_leader = FetchLeaderIdAndEpoch{p->leader, p->leader_epoch, {}};
      } else if (version >= 9) {
        error = check_leader_epoch(*p, fp.current_leader_epoch);
      }
      if (!error && p) {
        const std::int64_t end = p->log.log_end_offset();
        pd.high_watermark = end;
        pd.last_stable_offset = end;
        pd.log_start_offset = p->log.log_start_offset();
        if (fp.fetch_offset < p->log.log_start_offset() || fp.fetch_offset > end) {
          error = ErrorCode::kOffsetOutOfRange;
        } else if (fp.fetch_offset < end) {
          // KIP-74: the first batch is returned even over the limits, so a
          // consumer can never get stuck behind a large batch.
          const std::size_t room = out.record_bytes >= budget ? 0 : budget - out.record_bytes;
          std::size_t limit = std::min(room, static_cast<std::size_t>(std::max(fp.partition_max_bytes, 0)));
          if (out.record_bytes == 0) limit = std::max<std::size_t>(limit, 1);
          if (limit > 0) {
            *buffer = p->log.read(fp.fetch_offset, limit);
            if (out.record_bytes > 0 && buffer->size() > room) buffer->clear();
            pd.records.data = ByteView(*buffer);
            out.record_bytes += buffer->size();
          }
        }
      }
      if (error) {
        pd.error_code = *error;
        out.has_error = true;
      }
      tr.partitions.push_back(std::move(pd));
    }
    out.response.responses.push_back(std::move(tr));
  }
  return out;
}

ListOffsetsResponse handle_list_offsets(ClusterState& cluster, BrokerId self, const ListOffsetsRequest& request,
                                        std::int16_t version) {
  ListOffsetsResponse out;
  for (const auto& lt : request.topics) {
    ListOffsetsTopicResponse tr;
    tr.name = lt.name;
    for (const auto& lp : lt.partitions) {
      ListOffsetsPartitionResponse pr;
      pr.partition_index = lp.partition_index;
      Partition* p = find_partition(cluster, lt.name, lp.partition_index);
      std::optional<ErrorCode> error;
      if (!p) {
        error = ErrorCode::kUnknownTopicOrPartition;
      } else if (p->leader != self) {
        error = ErrorCode::kNotLeaderOrFollower;
      } else if (version >= 4) {
        error = check_leader_epoch(*p, lp.current_leader_epoch);
      }
      if (error) {
        pr.error_code = *error;
      } else {
        pr.leader_epoch = p->leader_epoch;
        if (lp.timestamp == kListOffsetsEarliest) {
          pr.offset = p->log.log_start_offset();
        } else if (lp.timestamp == kListOffsetsLatest) {
          pr.offset = p->log.log_end_offset();  // the high watermark
        } else if (lp.timestamp == kListOffsetsMaxTimestamp && version >= 7) {
          if (auto found = p->log.max_timestamp_offset()) {
            pr.offset = found->offset;
            pr.timestamp = found->timestamp;
          }
        } else if (lp.timestamp >= 0) {
          if (auto found = p->log.offset_for_timestamp(lp.timestamp)) {
            pr.offset = found->offset;
            pr.timestamp = found->timestamp;
          }
        } else {
          pr.error_code = ErrorCode::kUnsupportedVersion;  // a special value this version lacks
        }
      }
      tr.partitions.push_back(std::move(pr));
    }
    out.topics.push_back(std::move(tr));
  }
  return out;
}

}  // namespace pp::test_broker
