#include "proxy/frontend/produce_handler.h"

#include <chrono>
#include <optional>

#include "proxy/frontend/client_session.h"
#include "proxy/frontend/decode_room.h"
#include "proxy/frontend/log.h"
#include "proxy/frontend/pending_produce.h"
#include "proxy/frontend/produce_conversion.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/protocol/codec.h"

namespace pp {
namespace {

bool valid_acks(std::int16_t acks) {
  return acks == 0 || acks == 1 || acks == -1;
}

// The error a client can act on for an upstream result. Most pass through as
// they are (retriable ones stay retriable). Errors about the proxy's own
// producer identity or its upstream link say nothing true about the client's
// request: they become REQUEST_TIMED_OUT, the code that says "outcome
// unknown, retrying may duplicate", which every client version knows.
ErrorCode client_error(ErrorCode upstream) {
  switch (upstream) {
    case ErrorCode::kOutOfOrderSequenceNumber:
    case ErrorCode::kDuplicateSequenceNumber:
    case ErrorCode::kInvalidProducerEpoch:
    case ErrorCode::kUnknownProducerId:
    case ErrorCode::kInvalidProducerIdMapping:
    case ErrorCode::kProducerFenced:
    case ErrorCode::kInvalidTxnState:
    case ErrorCode::kTransactionalIdAuthorizationFailed:
    case ErrorCode::kNetworkException:
      return ErrorCode::kRequestTimedOut;
    case ErrorCode::kUnsupportedVersion:
      // The upstream refused the proxy, not the client's request version: a
      // client must not read this as "downgrade your Produce version".
      return ErrorCode::kUnknownServerError;
    default:
      return upstream;
  }
}

// Which client software sends which Produce version and message format: the
// magic byte (offset 16 in a MessageSet entry and in a RecordBatch alike) of
// the first non-empty record set.
void report_client_produce(ClientSession& session, std::int16_t version, const ProduceRequest& request) {
  std::int8_t magic = -1;
  for (const ProduceTopicData& t : request.topic_data) {
    for (const ProducePartitionData& p : t.partition_data) {
      const ByteView set = p.records.data.value_or(ByteView{});
      if (magic < 0 && set.size() > 16) magic = static_cast<std::int8_t>(set[16]);
    }
  }
  const auto [software, software_version] = session.client_software();
  session.context().observer.on_client_produce(software, software_version, version, magic);
}

// The topic cap (TopicDirectory::admit_topic): a refused entry's records are
// released and not counted as received.
void refuse_unadmitted_topics(TopicDirectory& topics, ProduceConversion& converted) {
  for (PartitionProduce& p : converted.partitions) {
    if (p.error != ErrorCode::kNone) continue;
    TopicAdmission admission = topics.admit_topic(p.topic);
    if (admission.error == ErrorCode::kNone) continue;
    converted.records -= p.run.records.size();
    converted.wire_bytes -= p.wire_bytes;
    p.error = admission.error;
    p.error_message = std::move(admission.reason);
    p.run = RecordRun{};
    p.client_batch.reset();
  }
}

// WRITE on each entry's topic (AccessRules): a forbidden topic's partitions
// are answered TOPIC_AUTHORIZATION_FAILED and their records released; the
// other topics of the request go on as if it had named them alone.
void refuse_unauthorized_topics(ClientSession& session, ProduceConversion& converted) {
  for (PartitionProduce& p : converted.partitions) {
    if (p.error != ErrorCode::kNone || session.access().may_write(p.topic)) continue;
    session.context().observer.on_authorization_denied(session.principal().name(), "write");
    converted.records -= p.run.records.size();
    converted.wire_bytes -= p.wire_bytes;
    p.error = ErrorCode::kTopicAuthorizationFailed;
    p.error_message = "principal " + session.principal().name() + " may not write to the topic";
    p.run = RecordRun{};
    p.client_batch.reset();
  }
}

// The run's decoded records count into its connection's account (the sink
// charges them to the budget) for as long as the run lives: its storage goes
// with it, also when the connection has closed meanwhile.
void charge_to_connection(ClientSession& session, RecordRun& run) {
  struct Held {
    std::shared_ptr<const void> storage;
    MemoryCharge charge;
  };
  auto held = std::make_shared<Held>();
  held->charge = MemoryCharge::account_only(session.memory_account(), run.size_bytes);
  held->storage = std::move(run.storage);
  run.storage = std::move(held);
}

ProduceConversionOptions conversion_options(const FrontendContext& ctx, const DecodeRoom& room) {
  ProduceConversionOptions options;
  options.max_decompressed_bytes = ctx.config.max_decompressed_bytes_per_request;
  options.max_decoded_bytes = room.max_decoded_bytes;
  options.max_decoded_bytes_is_room = room.by_room();
  options.now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  options.timestamp_after_max_ms = ctx.config.timestamp_after_max_ms;
  options.timestamp_before_max_ms = ctx.config.timestamp_before_max_ms;
  options.max_record_batch_bytes = ctx.config.max_upstream_batch_bytes;
  options.topic_batch_limit = [&topics = ctx.topics](std::string_view topic) { return topics.max_batch_bytes(topic); };
  options.compression = ctx.config.upstream_compression;
  return options;
}

// Waits for twice the room it had (at least 1 MiB), up to the cap: a request
// is decoded again a bounded number of times, and with the cap's room it is
// never parked again.
void handle_produce_received(ClientSession& session, const RequestHeader& header,
                             std::shared_ptr<const FrameBuffer> frame, WireReader& body, std::uint64_t received_ms);

void park(ClientSession& session, const RequestHeader& header, std::shared_ptr<const FrameBuffer> frame,
          std::size_t body_at, const DecodeRoom& room, std::uint64_t received_ms) {
  constexpr std::size_t kMinRoomWanted = 1048576;
  const std::size_t cap = session.context().config.max_decoded_bytes_per_request;
  const std::size_t wanted = std::min(cap, std::max(2 * room.max_decoded_bytes, kMinRoomWanted));
  frontend::log().debug("{}: Produce decodes to more than the {} bytes of room in the memory budget: waits for {}",
                        session.describe(), room.max_decoded_bytes, wanted);
  ++session.context().counters.requests_parked_total;
  session.context().observer.on_request_parked();
  session.park_request(wanted, [header, frame = std::move(frame), body_at, received_ms](ClientSession& s) {
    WireReader body(ByteView(*frame).subspan(body_at), body_at);
    handle_produce_received(s, header, frame, body, received_ms);
  });
}

// Decodes what the client sent into per-partition runs and counts it; an
// invalid acks converts nothing (every entry is answered INVALID_REQUIRED_ACKS).
// Nothing when the request closed the connection or was parked.
std::optional<ProduceConversion> decode_and_convert(ClientSession& session, const RequestHeader& header,
                                                    std::shared_ptr<const FrameBuffer> frame, WireReader& body,
                                                    ProduceRequest& request, std::uint64_t received_ms) {
  FrontendContext& ctx = session.context();
  const std::int16_t version = header.api_version;
  const std::size_t body_at = body.offset();
  auto decoded = decode_body<ProduceRequest>(body, version);
  if (!decoded) {
    session.close_after_pending("malformed Produce v" + std::to_string(version) +
                                " request: " + decoded.error().describe());
    return std::nullopt;
  }
  request = std::move(*decoded);
  name_topics_by_id(request, version, [&topics = ctx.topics](const Uuid& id) { return topics.topic_name(id); });
  ProduceConversion converted;
  if (valid_acks(request.acks)) {
    const DecodeRoom room = decode_room(session);
    const std::size_t budget_room = ctx.sink.memory_budget().room();
    converted = convert_produce_request(request, version, frame, conversion_options(ctx, room));
    if (room.may_wait && converted.over_decoded_bytes) {
      park(session, header, std::move(frame), body_at, room, received_ms);
      return std::nullopt;
    }
    if (room.by_room() && converted.over_decoded_bytes) {
      ++ctx.counters.requests_refused_for_memory_total;
      ctx.observer.on_request_refused_for_memory();
    }
    // Decoded in the fair-share headroom: counted there at once.
    if (converted.decoded_bytes > budget_room) ctx.flow->headroom_taken(converted.decoded_bytes);
  }
  report_client_produce(session, version, request);
  refuse_unauthorized_topics(session, converted);
  refuse_unadmitted_topics(ctx.topics, converted);
  for (PartitionProduce& p : converted.partitions) {
    if (p.run.storage) charge_to_connection(session, p.run);
  }
  for (const PartitionProduce& p : converted.partitions) {
    if (p.error != ErrorCode::kNone) {
      frontend::log().warn("{}: Produce v{} to {}-{} refused with {}: {}", session.describe(), version, p.topic,
                           p.partition, error_name(p.error), p.error_message);
    }
  }
  ctx.counters.records_received_total += converted.records;
  ctx.counters.received_bytes_total += converted.wire_bytes;
  ctx.observer.on_records_received(static_cast<std::int64_t>(converted.records),
                                   static_cast<std::int64_t>(converted.wire_bytes));
  return converted;
}

RunTicket submit_client_batch(ClientSession& session, PartitionProduce& p,
                              std::function<void(const ClientBatchOutcome&)> answer);

// acks=0: no answer, but the records are still delivered ("A client's
// acknowledgement is a promise", docs/design/ARCHITECTURE.md).
void submit_without_answer(ClientSession& session, ProduceConversion& converted) {
  FrontendContext& ctx = session.context();
  bool refused = false;
  for (PartitionProduce& p : converted.partitions) {
    if (p.error != ErrorCode::kNone) {
      refused = true;
    } else if (p.client_batch && !p.run.records.empty()) {
      submit_client_batch(session, p, [](const ClientBatchOutcome&) {});
    } else if (!p.run.records.empty()) {
      ctx.sink.submit(p.topic, p.partition, std::move(p.run),
                      [topic = p.topic, partition = p.partition](const RunResult& r) {
                        if (r.error != ErrorCode::kNone) {
                          frontend::log().debug("acks=0 records for {}-{} failed upstream: {}", topic, partition,
                                                error_name(r.error));
                        }
                      });
    }
  }
  ctx.observer.on_produce_done(0, 0);
  // As a broker does for acks=0: an entry it refused closes the connection,
  // the only way such a client learns something is wrong.
  if (refused) session.close_after_pending("acks=0 Produce request had refused partitions");
}

ClientBatchOutcome outcome_of(const RunResult& r) {
  return ClientBatchOutcome{client_error(r.error), r.base_offset, r.log_append_time_ms, r.log_start_offset,
                            r.error_message,       r.withdrawn,   r.maybe_written};
}

void count_check(FrontendContext& ctx, const ClientSession& session, const PartitionProduce& p, const BatchCheck& c) {
  switch (c.verdict) {
    case BatchVerdict::kDuplicateAcked:
      ++ctx.counters.client_duplicates_acked_total;
      ctx.observer.on_client_duplicate("acked");
      frontend::log().debug("{}: retry of an acknowledged batch to {}-{}: answered its offset {} again",
                            session.describe(), p.topic, p.partition, c.outcome.base_offset);
      return;
    case BatchVerdict::kDuplicateInFlight:
      ++ctx.counters.client_duplicates_in_flight_total;
      ctx.observer.on_client_duplicate("in_flight");
      frontend::log().debug("{}: retry of a batch in flight to {}-{}: waits for the original", session.describe(),
                            p.topic, p.partition);
      return;
    case BatchVerdict::kReject:
      ++ctx.counters.client_sequence_errors_total;
      frontend::log().warn("{}: Produce to {}-{} answered {}: {}", session.describe(), p.topic, p.partition,
                           error_name(c.outcome.error), c.outcome.error_message);
      return;
    case BatchVerdict::kAppend:
      return;
  }
}

// An idempotent client's batch: the dedup rules decide whether it goes
// upstream (docs/design/CLIENT_DEDUP.md). `answer` gets its outcome, whichever
// way it comes: at once, from the original batch, or from upstream. The
// ticket is the run's when the batch went to the sink.
RunTicket submit_client_batch(ClientSession& session, PartitionProduce& p,
                              std::function<void(const ClientBatchOutcome&)> answer) {
  FrontendContext& ctx = session.context();
  const BatchCheck c = ctx.client_producers.check(p.topic, p.partition, *p.client_batch, uv_now(ctx.loop));
  ctx.charge_client_producers();
  count_check(ctx, session, p, c);
  switch (c.verdict) {
    case BatchVerdict::kDuplicateAcked:
    case BatchVerdict::kReject:
      answer(c.outcome);
      return {};
    case BatchVerdict::kDuplicateInFlight:
      ctx.client_producers.attach(c.handle, std::move(answer));
      return {};
    case BatchVerdict::kAppend:
      break;
  }
  auto done = [context = session.shared_context(), handle = c.handle, answer = std::move(answer)](const RunResult& r) {
    const ClientBatchOutcome o = outcome_of(r);
    // The front end may be gone; the state is not (the context is shared).
    for (BatchWaiter& w : context->client_producers.complete(handle, o)) w(o);
    context->charge_client_producers();
    answer(o);
  };
  return ctx.sink.submit(p.topic, p.partition, std::move(p.run), std::move(done));
}

// acks 1/-1: each partition's result fills its entry; the last one answers,
// or the request's deadline answers what is left (produce_deadlines.h).
void submit_and_answer(ClientSession& session, const std::shared_ptr<PendingProduce>& pending,
                       ProduceConversion& converted, std::int32_t timeout_ms) {
  FrontendContext& ctx = session.context();
  // Count first, with one for this loop: completions never run inside
  // submit(), but immediate answers below must not finish the request
  // before every run is submitted.
  pending->expect_answers(converted.partitions.size() + 1);
  for (std::size_t i = 0; i < converted.partitions.size(); ++i) {
    PartitionProduce& p = converted.partitions[i];
    if (p.error != ErrorCode::kNone || p.run.records.empty()) {
      // Refused here, or an empty legacy set: nothing to send upstream.
      pending->answer(i, p.error, nullptr, p.error_message);
      continue;
    }
    const auto records = static_cast<std::uint32_t>(p.run.records.size());
    // The client retries what is withdrawn at its deadline: its other runs
    // in the partition must not overtake that retry (RecordSink::withdraw).
    p.run.origin = session.id();
    if (p.client_batch) {
      pending->set_run(
          i, submit_client_batch(session, p, [pending, i](const ClientBatchOutcome& o) { pending->answer(i, o); }),
          records);
      continue;
    }
    pending->set_run(i,
                     ctx.sink.submit(p.topic, p.partition, std::move(p.run),
                                     [pending, i](const RunResult& r) {
                                       pending->answer(i, client_error(r.error), &r, r.error_message);
                                     }),
                     records);
  }
  pending->release_guard();
  if (!pending->finished() && ctx.deadlines) {
    const std::int64_t hold = produce_hold_ms(timeout_ms, ctx.config.max_request_hold_ms);
    ctx.deadlines->schedule(*pending,
                            pending->received_ms() + static_cast<std::uint64_t>(std::max<std::int64_t>(hold, 0)));
  }
}

// KIP-219: the request's bytes count against its principal's produce quota
// (ProduceQuota); over it, the connection is muted for the throttle time,
// which the response carries. Counted per principal for the metrics.
std::uint64_t record_against_quota(ClientSession& session, std::size_t request_bytes) {
  FrontendContext& ctx = session.context();
  const std::string& name = session.principal().name();
  std::uint64_t throttle_ms = 0;
  if (auto it = ctx.produce_quotas.find(name);
      it != ctx.produce_quotas.end() && session.access().produce_bytes_per_second() > 0) {
    throttle_ms = it->second.record(request_bytes, uv_now(ctx.loop));
  }
  ctx.observer.on_principal_produce(name, static_cast<std::int64_t>(request_bytes),
                                    static_cast<std::int64_t>(throttle_ms));
  if (throttle_ms > 0) {
    frontend::log().debug("{}: {} over its produce quota: throttled {} ms", session.describe(),
                          session.principal().describe(), throttle_ms);
    session.throttle(throttle_ms);
  }
  return throttle_ms;
}

// A request is held from its first receipt: a parked one keeps the time
// it was read, not the time it was decoded again.
void handle_produce_received(ClientSession& session, const RequestHeader& header,
                             std::shared_ptr<const FrameBuffer> frame, WireReader& body, std::uint64_t received_ms) {
  FrontendContext& ctx = session.context();
  const std::int16_t version = header.api_version;
  ProduceRequest request;
  const std::size_t request_bytes = frame->size();
  auto converted = decode_and_convert(session, header, std::move(frame), body, request, received_ms);
  if (!converted) return;
  const std::uint64_t throttle_ms = record_against_quota(session, request_bytes);
  const std::int16_t acks = request.acks;
  for (PartitionProduce& p : converted->partitions) {
    p.run.client.acks = acks;
    if (p.client_batch) {
      p.run.client.producer_id = p.client_batch->producer_id;
      p.run.client.producer_epoch = p.client_batch->epoch;
      p.run.client.base_sequence = p.client_batch->first_sequence;
    }
  }
  if (acks == 0) {
    submit_without_answer(session, *converted);
  } else if (!valid_acks(acks)) {
    frontend::log().warn("{}: Produce v{} with acks={}: answered INVALID_REQUIRED_ACKS", session.describe(), version,
                         acks);
    auto pending = std::make_shared<PendingProduce>(session, version, header.correlation_id, request, received_ms);
    pending->answer_all(ErrorCode::kInvalidRequiredAcks, "acks must be -1, 0 or 1");
    return;
  } else {
    auto pending = std::make_shared<PendingProduce>(session, version, header.correlation_id, request, received_ms);
    pending->set_quota_throttle_ms(throttle_ms);
    submit_and_answer(session, pending, *converted, request.timeout_ms);
  }
  // The runs just charged may be what crosses the budget: pause everyone.
  ctx.flow->after_charge();
}

}  // namespace

void handle_produce(ClientSession& session, const RequestHeader& header, std::shared_ptr<const FrameBuffer> frame,
                    WireReader& body) {
  handle_produce_received(session, header, std::move(frame), body, session.request_receipt_ms());
}

}  // namespace pp
