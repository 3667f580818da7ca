#include "proxy/durable/spooled_run.h"

#include <memory>
#include <variant>
#include <vector>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace pp::durable {

Bytes encode_run_batch(const RecordRun& run) {
  RecordBatchBuildOptions options;
  options.producer_id = run.client.producer_id;
  options.producer_epoch = run.client.producer_epoch;
  options.base_sequence = run.client.base_sequence;
  RecordBatchBuilder builder(options);
  if (run.encoded) {
    builder.append_encoded(run.encoded->bytes, static_cast<std::int32_t>(run.records.size()),
                           run.encoded->base_timestamp, run.encoded->max_timestamp, run.encoded->crc);
  } else {
    for (const RunRecord& r : run.records) builder.append(r.timestamp_ms, r.key, r.value, r.headers);
  }
  return builder.build();
}

spool::RecordsEntry records_entry_for(const std::string& topic, std::int32_t partition, const RecordRun& run,
                                      const Bytes& batch) {
  spool::RecordsEntry e;
  e.topic = topic;
  e.partition = partition;
  e.acks = run.client.acks;
  e.client_producer_id = run.client.producer_id;
  e.client_producer_epoch = run.client.producer_epoch;
  e.client_base_sequence = run.client.base_sequence;
  e.record_count = static_cast<std::int32_t>(run.records.size());
  e.batch = batch;
  return e;
}

namespace {

// What a rebuilt run's views point into: the entry's bytes and the batch
// decoded from them (headers live in its record views).
struct Held {
  spool::LoadedEntry loaded;
  std::optional<RecordBatchView> view;
};

}  // namespace

std::expected<RecordRun, std::string> run_from_entry(spool::LoadedEntry loaded, std::int32_t first_record,
                                                     std::int32_t count) {
  auto held = std::make_shared<Held>();
  held->loaded = std::move(loaded);
  const auto* records = std::get_if<spool::RecordsEntry>(&held->loaded.entry.body);
  if (records == nullptr) return std::unexpected("entry " + std::to_string(held->loaded.entry.id) + " is not records");
  RecordBatchReadOptions options;
  options.verify_crc = false;  // the entry's checksum, checked by read_entry, covers the batch
  auto view = decode_record_batch(records->batch, options);
  if (!view) return std::unexpected("entry " + std::to_string(held->loaded.entry.id) + ": " + view.error().describe());
  held->view.emplace(std::move(*view));
  const auto all = held->view->records();
  const auto total = static_cast<std::int32_t>(all.size());
  if (count < 0) count = total - first_record;
  if (first_record < 0 || count <= 0 || first_record > total - count) {
    return std::unexpected("entry " + std::to_string(held->loaded.entry.id) + " holds " + std::to_string(total) +
                           " records, not [" + std::to_string(first_record) + ", +" + std::to_string(count) + ")");
  }
  RecordRun run;
  run.records.reserve(static_cast<std::size_t>(count));
  std::size_t header_bytes = 0;
  for (std::int32_t i = first_record; i < first_record + count; ++i) {
    const RecordView& r = all[static_cast<std::size_t>(i)];
    run.records.push_back(RunRecord{held->view->timestamp_of(r), r.key, r.value, r.headers});
    header_bytes += r.headers.size() * sizeof(RecordHeaderView);
  }
  run.size_bytes = held->loaded.bytes.size() + all.size() * sizeof(RecordView) + header_bytes +
                   run.records.size() * sizeof(RunRecord);
  run.durable_entry = held->loaded.entry.id;
  run.durable_first_record = first_record;
  run.client.acks = records->acks;
  run.client.producer_id = records->client_producer_id;
  run.client.producer_epoch = records->client_producer_epoch;
  run.client.base_sequence = records->client_base_sequence;
  run.storage = std::move(held);
  return run;
}

}  // namespace pp::durable
