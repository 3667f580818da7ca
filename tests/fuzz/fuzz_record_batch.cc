// RecordBatch v2 from a peer (a Produce v3+ client, a Fetch response): the
// splitter and the decoder must bound, reject and never crash, under a decode
// budget as the front end uses one; whatever decodes must rebuild to a batch
// that decodes to the same records.
#include <cstdint>
#include <vector>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace {

constexpr std::size_t kCap = 1 << 20;

bool same(std::optional<pp::ByteView> a, std::optional<pp::ByteView> b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || pp::bytes_equal(*a, *b);
}

void check_batch(pp::ByteView wire) {
  pp::RecordBatchReadOptions options;
  options.max_decompressed_bytes = kCap;
  pp::DecodeBudget budget(kCap);  // as the front end charges decoded views
  options.budget = &budget;
  auto batch = pp::decode_record_batch(wire, options);
  if (budget.used() > budget.cap()) __builtin_trap();
  if (!batch) {
    if (batch.error().field.empty()) __builtin_trap();
    return;
  }
  const pp::RecordBatchHeader& h = batch->header();
  if (batch->records().size() != static_cast<std::size_t>(h.records_count)) __builtin_trap();

  // Rebuild uncompressed with the same header fields and compare records.
  pp::RecordBatchBuildOptions o;
  o.base_offset = h.base_offset;
  o.producer_id = h.producer_id;
  o.producer_epoch = h.producer_epoch;
  o.base_sequence = h.base_sequence;
  pp::RecordBatchBuilder builder(o);
  for (const pp::RecordView& r : batch->records()) {
    builder.append(batch->timestamp_of(r), r.key, r.value, r.headers);
  }
  pp::Bytes rebuilt = builder.build();
  pp::patch_producer_state(rebuilt, h.producer_id, h.producer_epoch, h.base_sequence);
  auto again = pp::decode_record_batch(rebuilt);
  if (!again || again->records().size() != batch->records().size()) __builtin_trap();
  for (std::size_t i = 0; i < batch->records().size(); ++i) {
    const pp::RecordView& a = batch->records()[i];
    const pp::RecordView& b = again->records()[i];
    if (!same(a.key, b.key) || !same(a.value, b.value) || a.headers.size() != b.headers.size() ||
        again->timestamp_of(b) != batch->timestamp_of(a)) {
      __builtin_trap();
    }
    // Kafka's builder numbers records 0..n-1 whatever the input said.
    if (b.offset_delta != static_cast<std::int32_t>(i)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const pp::ByteView input(data, size);
  check_batch(input);
  auto split = pp::split_record_batches(input);
  if (split) {
    std::size_t covered = split->partial.size();
    for (pp::ByteView b : split->batches) {
      covered += b.size();
      check_batch(b);
    }
    if (covered != size) __builtin_trap();
  }
  return 0;
}
