// Produce, with Kafka's order of checks (docs/design/PIPELINE.md D.2): request-level record
// validation (KafkaApis.handleProduceRequest / ProduceRequest.validateRecords),
// leadership (Partition.appendRecordsToLeader), batch validation
// (LogValidator.validateBatch), producer state (UnifiedLog.analyzeAndValidateProducerState),
// then the append.
#include <set>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"
#include "tests/broker/handlers.h"
#include "tests/broker/log.h"

namespace pp::test_broker {

namespace {

struct PartitionOutcome {
  ErrorCode error = ErrorCode::kNone;
  const char* reason = "";
};

bool is_appended_anyway(ErrorCode e) {
  // Errors Kafka returns after the leader appended (docs/design/PIPELINE.md C.6): an
  // injected one still runs the append, so a retry must dedup.
  return e == ErrorCode::kNotEnoughReplicasAfterAppend || e == ErrorCode::kRequestTimedOut;
}

std::optional<ErrorCode> take_injected_error(Partition& p) {
  while (!p.injected_errors.empty()) {
    InjectedError& e = p.injected_errors.front();
    if (e.remaining <= 0) {
      p.injected_errors.erase(p.injected_errors.begin());
      continue;
    }
    const ErrorCode code = e.code;
    if (--e.remaining == 0) p.injected_errors.erase(p.injected_errors.begin());
    return code;
  }
  return std::nullopt;
}

class PartitionProducer {
 public:
  PartitionProducer(ClusterState& cluster, const BrokerInfo& self, std::int16_t version, std::int16_t acks,
                    Partition& p, ProducePartitionResponse& out)
      : cluster_(cluster), self_(self), version_(version), acks_(acks), p_(p), out_(out) {}

  // Returns the watchdog token for the batch, if it carries a producer id.
  std::optional<HeldBatch> watch(const RecordsView& records) {
    if (!records.data || records.data->size() < record_batch_layout::kHeaderSize) return std::nullopt;
    auto header = decode_record_batch_header(*records.data);
    if (!header || header->producer_id < 0) return std::nullopt;
    base_sequence_ = header->base_sequence;
    const int window = cluster_.retain_on(self_.id, p_);
    if (p_.watchdog.on_received(header->producer_id, window)) {
      log().warn(
          "window violation: producer {} sent a batch for {}-{} (seq {}) to broker {} while it already "
          "had {} batches of that partition in flight; the window is {}",
          header->producer_id, p_.topic, p_.index, header->base_sequence, self_.id,
          p_.watchdog.held(header->producer_id) - 1, window);
    }
    return HeldBatch{&p_, header->producer_id};
  }

  std::int32_t base_sequence() const { return base_sequence_; }  // after watch(), for logs

  PartitionOutcome run(const RecordsView& records, std::set<BrokerId>& leader_hints) {
    // ProduceRequest.validateRecords: v3+ carries exactly one magic-2 batch.
    if (!records.data) return {ErrorCode::kInvalidRecord, "null records"};
    auto split = split_record_batches(*records.data);
    if (!split || split->batches.size() != 1 || split->has_partial()) {
      return {ErrorCode::kInvalidRecord, "v3+ needs exactly one record batch per partition"};
    }
    const ByteView batch = split->batches.front();
    auto header = decode_record_batch_header(batch);
    if (!header) return {ErrorCode::kInvalidRecord, "not a magic-2 record batch"};
    if (header->compression() == CompressionCodec::kZstd && version_ < 7) {
      return {ErrorCode::kUnsupportedCompressionType, "zstd needs Produce v7 (KIP-110)"};
    }
    if (p_.leader != self_.id) {
      if (version_ >= 10 && p_.leader >= 0) {  // KIP-951: point the client at the leader
        out_.current_leader = LeaderIdAndEpoch{p_.leader, p_.leader_epoch, {}};
        leader_hints.insert(p_.leader);
      }
      return {ErrorCode::kNotLeaderOrFollower, "not the leader"};
    }
    if (acks_ != -1 && acks_ != 0 && acks_ != 1) return {ErrorCode::kInvalidRequiredAcks, "bad acks"};

    std::optional<ErrorCode> injected = take_injected_error(p_);
    if (injected && !is_appended_anyway(*injected)) return {*injected, "injected"};

    PartitionOutcome outcome = validate_and_append(batch, *header);
    if (injected && outcome.error == ErrorCode::kNone) {
      out_.base_offset = -1;
      out_.log_append_time_ms = -1;
      return {*injected, "injected after the append"};
    }
    return outcome;
  }

 private:
  // reject-key, at LogValidator's place: before the producer state, so no
  // sequence is used.
  template <class Records>
  std::optional<ErrorCode> rejected_key_error(const Records& recs) const {
    if (p_.rejected_keys.empty()) return std::nullopt;
    for (const auto& r : recs) {
      if (!r.key) continue;
      auto it = p_.rejected_keys.find(std::string(r.key->begin(), r.key->end()));
      if (it != p_.rejected_keys.end()) return it->second;
    }
    return std::nullopt;
  }

  PartitionOutcome validate_and_append(ByteView batch, const RecordBatchHeader& header) {
    // LogValidator.validateBatch and the CRC check (D.2 step 4).
    auto decoded = decode_record_batch(batch);
    if (!decoded) {
      return {ErrorCode::kCorruptMessage,
              decoded.error().kind == DecodeErrorKind::kBadChecksum ? "CRC-32C mismatch" : "batch does not decode"};
    }
    if (header.is_control()) return {ErrorCode::kInvalidRecord, "control batch from a client"};
    if (header.records_count != header.last_offset_delta + 1) {
      return {ErrorCode::kInvalidRecord, "record count does not match LastOffsetDelta"};
    }
    const auto recs = decoded->records();
    for (std::size_t i = 0; i < recs.size(); ++i) {
      if (recs[i].offset_delta != static_cast<std::int32_t>(i)) {
        return {ErrorCode::kInvalidRecord, "record offset deltas are not 0..n-1"};
      }
    }
    if (header.producer_id >= 0 && header.base_sequence < 0) {
      return {ErrorCode::kInvalidRecord, "producer id without a base sequence"};
    }
    if (auto refused = rejected_key_error(recs)) {
      ++p_.rejected_batches;
      return {*refused, "a record key the test refuses (reject-key)"};
    }
    if (header.is_transactional()) {
      return {ErrorCode::kInvalidTxnState, "transactions are not supported by the test cluster"};
    }

    const BatchProducerInfo info{header.producer_id, header.producer_epoch, header.base_sequence,
                                 header.last_offset_delta, header.max_timestamp};
    if (header.producer_id >= 0) {
      const SequenceVerdict verdict = p_.producers.check(info, cluster_.options().no_state_rule, p_.log.ever_written());
      if (verdict.kind == SequenceVerdict::Kind::kReject) {
        log().debug("{}-{}: producer {} epoch {} seq {}..{}: {} ({})", p_.topic, p_.index, info.producer_id,
                    info.producer_epoch, info.base_sequence, info.last_sequence(), error_name(verdict.error),
                    verdict.reason);
        out_.log_start_offset = p_.log.log_start_offset();
        return {verdict.error, verdict.reason};
      }
      if (verdict.kind == SequenceVerdict::Kind::kDuplicate) {
        // D.2 5(a): NONE with the original offset, the batch's timestamp as
        // log_append_time (UnifiedLog.append), nothing appended.
        ++p_.duplicates;
        log().debug("{}-{}: producer {} seq {}..{} is a duplicate of offset {}", p_.topic, p_.index, info.producer_id,
                    info.base_sequence, info.last_sequence(), verdict.duplicate_of.first_offset());
        out_.base_offset = verdict.duplicate_of.first_offset();
        out_.log_append_time_ms = verdict.duplicate_of.timestamp;
        out_.log_start_offset = p_.log.log_start_offset();
        set_window();
        return {};
      }
    }
    append(batch, header, *decoded);
    return {};
  }

  void append(ByteView batch, const RecordBatchHeader& header, const RecordBatchView& decoded) {
    AppendedBatch meta;
    meta.last_offset_delta = header.last_offset_delta;
    meta.producer_id = header.producer_id;
    meta.producer_epoch = header.producer_epoch;
    meta.base_sequence = header.base_sequence;
    meta.record_count = header.records_count;
    meta.max_timestamp = header.max_timestamp;
    meta.leader = self_.id;
    meta.leader_epoch = p_.leader_epoch;
    std::vector<AppendedRecord> records;
    records.reserve(decoded.records().size());
    const std::int64_t base = p_.log.log_end_offset();
    for (const auto& r : decoded.records()) {
      AppendedRecord a;
      a.offset = base + r.offset_delta;
      a.producer_id = header.producer_id;
      a.producer_epoch = header.producer_epoch;
      a.sequence = header.producer_id >= 0 ? increment_sequence(header.base_sequence, r.offset_delta) : -1;
      a.timestamp = decoded.timestamp_of(r);
      if (r.key) a.key = Bytes(r.key->begin(), r.key->end());
      if (r.value) a.value = Bytes(r.value->begin(), r.value->end());
      records.push_back(std::move(a));
    }
    const std::int64_t base_offset = p_.log.append(batch, std::move(meta), std::move(records));
    if (header.producer_id >= 0) {
      p_.producers.on_append(BatchProducerInfo{header.producer_id, header.producer_epoch, header.base_sequence,
                                               header.last_offset_delta, header.max_timestamp},
                             base_offset + header.last_offset_delta);
    }
    out_.base_offset = base_offset;
    out_.log_append_time_ms = -1;  // CreateTime topics
    out_.log_start_offset = p_.log.log_start_offset();
    set_window();
  }

  void set_window() {
    // KIP-1269 (v14): the leader announces its window; the codec omits the
    // tag when it is the default 5. Legacy brokers never reach v14. The
    // topic-level placement is written by handle_produce.
    if (!self_.legacy && cluster_.options().retain_placement != RetainPlacement::kTopic) {
      out_.producer_state_batches_to_retain = cluster_.retain_on(self_.id, p_);
    }
  }

  ClusterState& cluster_;
  const BrokerInfo& self_;
  std::int16_t version_;
  std::int16_t acks_;
  Partition& p_;
  ProducePartitionResponse& out_;
  std::int32_t base_sequence_ = -1;
};

}  // namespace

ProduceResult handle_produce(ClusterState& cluster, BrokerId self, const ProduceRequest& request,
                             std::int16_t version) {
  ProduceResult result;
  const BrokerInfo* me = cluster.broker(self);
  std::set<BrokerId> leader_hints;
  for (const auto& td : request.topic_data) {
    ProduceTopicResponse tr;
    tr.name = td.name;
    tr.topic_id = td.topic_id;
    Topic* topic = version >= kProduceTopicIdVersion ? cluster.topic(td.topic_id) : cluster.topic(td.name);
    for (const auto& pd : td.partition_data) {
      ProducePartitionResponse pr;
      pr.index = pd.index;
      pr.base_offset = -1;
      PartitionOutcome outcome;
      if (!topic) {
        outcome.error =
            version >= kProduceTopicIdVersion ? ErrorCode::kUnknownTopicId : ErrorCode::kUnknownTopicOrPartition;
      } else if (pd.index < 0 || pd.index >= static_cast<std::int32_t>(topic->partitions.size())) {
        outcome.error = ErrorCode::kUnknownTopicOrPartition;
      } else {
        Partition& p = *topic->partitions[static_cast<std::size_t>(pd.index)];
        PartitionProducer producer(cluster, *me, version, request.acks, p, pr);
        if (auto held = producer.watch(pd.records)) result.held.push_back(*held);
        const std::int64_t end_before = p.log.log_end_offset();
        outcome = producer.run(pd.records, leader_hints);
        if (p.log.log_end_offset() != end_before) ++result.appended_batches;
        if (outcome.error == ErrorCode::kNotLeaderOrFollower) {
          log().trace("{}-{} on broker {}: seq {}: not the leader (broker {} is, epoch {})", p.topic, p.index, self,
                      producer.base_sequence(), p.leader, p.leader_epoch);
        } else if (outcome.error != ErrorCode::kNone) {
          log().debug("{}-{} on broker {}: {} ({})", p.topic, p.index, self, error_name(outcome.error), outcome.reason);
        } else {
          log().trace("{}-{} on broker {}: seq {}: appended or deduplicated at offset {}", p.topic, p.index, self,
                      producer.base_sequence(), pr.base_offset);
        }
      }
      if (outcome.error != ErrorCode::kNone) {
        pr.error_code = outcome.error;
        pr.base_offset = -1;
        if (version >= 8 && outcome.reason[0] != '\0') pr.error_message = outcome.reason;
      }
      tr.partition_responses.push_back(std::move(pr));
    }
    // KIP-1269 as revised: the topic's producer.state.batches.to.retain in
    // TopicProduceResponse (provisional tag), for every topic this broker
    // knows, as the topic config is the same for all its partitions here.
    if (topic && !topic->partitions.empty() && !me->legacy &&
        cluster.options().retain_placement != RetainPlacement::kPartition) {
      tr.producer_state_batches_to_retain = cluster.retain_on(self, *topic->partitions.front());
    }
    result.response.responses.push_back(std::move(tr));
  }
  for (BrokerId id : leader_hints) {
    if (const BrokerInfo* b = cluster.broker(id)) {
      result.response.node_endpoints.push_back(NodeEndpoint{b->id, b->host, b->port, std::nullopt, {}});
    }
  }
  return result;
}

void release(std::span<const HeldBatch> held) {
  for (const auto& h : held) h.partition->watchdog.on_released(h.producer_id);
}

}  // namespace pp::test_broker
