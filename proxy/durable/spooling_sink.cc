#include "proxy/durable/spooling_sink.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "proxy/durable/durable_completion.h"
#include "proxy/durable/spooled_run.h"

namespace pp::durable {

namespace {

// Not in the spool, not upstream: the client retries it as it is, as it
// does a request the memory budget refused.
RunResult not_spooled(std::string message) {
  RunResult r;
  r.error = ErrorCode::kNotEnoughReplicas;
  r.error_message = std::move(message);
  r.withdrawn = true;
  return r;
}

}  // namespace

// A run between its append and its entry's commit.
struct SpoolingSink::Appending {
  std::string topic;
  std::int32_t partition = 0;
  RecordRun run;
  RunCompletion done;
  bool answered_from_spool = true;  // else by the upstream's outcome
};

SpoolingSink::SpoolingSink(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer, SpoolFeeder& feeder,
                           SpooledTopic spooled)
    : writer_(writer), producer_(producer), feeder_(feeder), spooled_(std::move(spooled)), later_(loop) {}

SpoolingSink::~SpoolingSink() {
  *alive_ = false;
}

RunTicket SpoolingSink::submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) {
  const bool answered_from_spool = spooled_(topic);
  if (!answered_from_spool && run.client.producer_id < 0) {
    ++*passthrough_;
    return producer_.submit(topic, partition, std::move(run),
                            [count = passthrough_, done = std::move(done)](const RunResult& r) {
                              --*count;
                              done(r);
                            });
  }
  const Bytes batch = encode_run_batch(run);
  const spool::RecordsEntry entry = records_entry_for(topic, partition, run, batch);
  auto appending =
      std::make_shared<Appending>(Appending{topic, partition, std::move(run), std::move(done), answered_from_spool});
  const auto appended = writer_.append(entry, [this, alive = alive_, appending](int status, spool::EntryId id) {
    if (*alive) on_durable(*appending, status, id);
  });
  if (!appended) {
    const bool full = appended.error() == spool::SpoolWriter::Refusal::kFull;
    later_.post([appending, full] {
      appending->done(not_spooled(full ? "the spool is full (spool.max_bytes)" : "the spool is closed"));
    });
    return {};
  }
  ++appending_;
  // No ticket: an acknowledgement from the spool is never withdrawn, it
  // only waits for its commit.
  return {};
}

void SpoolingSink::on_durable(Appending& a, int status, spool::EntryId id) {
  --appending_;
  if (status != 0) {
    a.done(not_spooled(std::string("the spool could not write it: ") + uv_strerror(status)));
    return;
  }
  const auto records = static_cast<std::int64_t>(a.run.records.size());
  RunCompletion completion;
  if (a.answered_from_spool) {
    RunResult acknowledged;
    acknowledged.base_offset = -1;
    a.done(acknowledged);
    completion = durable_completion(a.topic, a.partition, records);
  } else {
    completion = std::move(a.done);
  }
  if (!feeder_.empty() || !SpoolFeeder::room_for_durable(producer_.memory_budget())) {
    // On disk only: the feeder reads it back in its turn.
    if (a.answered_from_spool) {
      feeder_.push(id);
    } else {
      feeder_.push(id, std::move(completion));
    }
    a.run = RecordRun{};
    return;
  }
  a.run.durable_entry = id;
  a.run.durable_first_record = 0;
  producer_.submit(a.topic, a.partition, std::move(a.run), std::move(completion));
}

}  // namespace pp::durable
