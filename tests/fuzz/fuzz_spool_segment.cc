// A spool segment read back from disk (docs/design/SPOOL.md, "Recovery"):
// the reader must bound, stop at the first damage and never crash; every
// entry it yields must re-encode to exactly the bytes it was read from (so
// nothing damaged passes as valid), ids must rise, and the index fed with
// them must answer every query (the client producers' snapshot and the
// client records after it among them).
#include <cstdint>

#include "proxy/spool/segment_reader.h"
#include "proxy/spool/spool_format.h"
#include "proxy/spool/spool_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const pp::ByteView input(data, size);
  pp::spool::SpoolIndex index;
  pp::spool::EntryId last = pp::spool::kNoEntry;
  const pp::spool::SegmentReader reader;
  const pp::spool::SegmentScan scan =
      reader.scan(input, [&](const pp::spool::Entry& entry, std::size_t offset, std::size_t entry_size) {
        if (entry.id <= last) __builtin_trap();
        last = entry.id;
        pp::Bytes again;
        if (pp::spool::encode_entry(entry, again) != entry_size) __builtin_trap();
        if (!pp::bytes_equal(again, input.subspan(offset, entry_size))) __builtin_trap();
        index.apply(entry, pp::spool::EntryLocation{1, offset, entry_size});
      });
  if (scan.valid_bytes + scan.invalid_bytes != size) __builtin_trap();
  if (!scan.damage && scan.invalid_bytes != 0) __builtin_trap();
  if (scan.header.problem && scan.entries != 0) __builtin_trap();
  (void)index.unsequenced_records();
  (void)index.unresolved_records();
  (void)index.unresolved_batches();
  (void)index.oldest_record_ms();
  (void)index.client_records();
  if (index.client_producers().has_value() != (index.client_producers_id() != pp::spool::kNoEntry)) __builtin_trap();
  (void)index.take_deletable(2);
  // The entry decoder alone, on the raw input as a payload.
  (void)pp::spool::decode_entry_payload(input);
  return 0;
}
