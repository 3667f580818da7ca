// A record run to and from its durable copy (docs/design/SPOOL.md,
// "Entries"): the one RecordBatch v2 a Records entry holds, built from the
// run (the client's own encoded section when it has one, else record by
// record) with the client's producer id, epoch and base sequence; and the
// run rebuilt from an entry read back, for the pipeline. Pure functions over
// bytes, any thread.
#pragma once

#include <cstdint>
#include <expected>
#include <string>

#include "proxy/base/bytes.h"
#include "proxy/pipeline/record_run.h"
#include "proxy/spool/entry_reader.h"
#include "proxy/spool/spool_entry.h"

namespace pp::durable {

// The run's records as one uncompressed RecordBatch v2, stamped with
// run.client's producer id, epoch and base sequence (-1 without).
Bytes encode_run_batch(const RecordRun& run);

// The Records entry for `run` to topic/partition; its batch borrows `batch`.
spool::RecordsEntry records_entry_for(const std::string& topic, std::int32_t partition, const RecordRun& run,
                                      const Bytes& batch);

// Records [first_record, first_record + count) of the Records entry in
// `loaded` as a run (count -1: to the entry's end) whose storage keeps the
// entry's bytes; durable_entry and durable_first_record name the copy, and
// size_bytes what it holds in memory. `loaded` is as read_entry returned
// it: the entry's CRC-32C, checked there, covers the batch, so the batch's
// own CRC is not checked again (docs/design/SPOOL.md, "Entries"). An error
// when the entry is not a Records entry, its batch does not decode, or the
// range is outside it.
std::expected<RecordRun, std::string> run_from_entry(spool::LoadedEntry loaded, std::int32_t first_record,
                                                     std::int32_t count = -1);

}  // namespace pp::durable
