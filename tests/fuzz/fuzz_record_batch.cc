// RecordBatch v2 from a peer (a Produce v3+ client, a Fetch response): the
// splitter and the decoder must bound, reject and never crash, under a decode
// budget as the front end uses one; whatever decodes must rebuild to a batch
// that decodes to the same records; and the fast record decoder must agree
// with the checked one, with or without the CRC checked.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace {

constexpr std::size_t kCap = 1 << 20;

bool same(std::optional<pp::ByteView> a, std::optional<pp::ByteView> b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || pp::bytes_equal(*a, *b);
}

// Same presence and the same place in the records section (each decode of a
// compressed batch has its own decompressed copy).
bool same_place(std::optional<pp::ByteView> a, pp::ByteView a_section, std::optional<pp::ByteView> b,
                pp::ByteView b_section) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->data() - a_section.data() == b->data() - b_section.data() && a->size() == b->size());
}

// The fast record decoder (issue 17) must agree with the checked one alone:
// the same records, or the same error, and the same budget charged.
void check_fast_agrees(pp::ByteView wire, const pp::Decoded<pp::RecordBatchView>& fast, const pp::DecodeBudget& charged,
                       pp::RecordBatchReadOptions options) {
  pp::DecodeBudget budget(kCap);
  options.budget = &budget;
  options.fast_records = false;
  const auto checked = pp::decode_record_batch(wire, options);
  if (budget.used() != charged.used() || fast.has_value() != checked.has_value()) __builtin_trap();
  if (!fast) {
    const pp::DecodeError& a = fast.error();
    const pp::DecodeError& b = checked.error();
    if (a.kind != b.kind || a.offset != b.offset || a.field != b.field) __builtin_trap();
    return;
  }
  if (fast->records().size() != checked->records().size()) __builtin_trap();
  const pp::ByteView fast_section = fast->records_bytes();
  const pp::ByteView checked_section = checked->records_bytes();
  const auto same_view = [&](std::optional<pp::ByteView> a, std::optional<pp::ByteView> b) {
    return same_place(a, fast_section, b, checked_section);
  };
  for (std::size_t i = 0; i < fast->records().size(); ++i) {
    const pp::RecordView& a = fast->records()[i];
    const pp::RecordView& b = checked->records()[i];
    if (a.attributes != b.attributes || a.timestamp_delta != b.timestamp_delta || a.offset_delta != b.offset_delta ||
        !same_view(a.key, b.key) || !same_view(a.value, b.value) || a.headers.size() != b.headers.size()) {
      __builtin_trap();
    }
    for (std::size_t h = 0; h < a.headers.size(); ++h) {
      if (!same_view(a.headers[h].key, b.headers[h].key) || !same_view(a.headers[h].value, b.headers[h].value)) {
        __builtin_trap();
      }
    }
  }
}

void check_batch(pp::ByteView wire) {
  pp::RecordBatchReadOptions options;
  options.max_decompressed_bytes = kCap;
  pp::DecodeBudget budget(kCap);  // as the front end charges decoded views
  options.budget = &budget;
  auto batch = pp::decode_record_batch(wire, options);
  if (budget.used() > budget.cap()) __builtin_trap();
  check_fast_agrees(wire, batch, budget, options);
  // Past the CRC, so that damaged records reach both record decoders.
  options.verify_crc = false;
  pp::DecodeBudget unchecked_budget(kCap);
  options.budget = &unchecked_budget;
  check_fast_agrees(wire, pp::decode_record_batch(wire, options), unchecked_budget, options);
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
  // The records carried as encoded (issue 17) build the same batch whether
  // the builder copies them or borrows them where they lie.
  if (h.compression() == pp::CompressionCodec::kNone && !batch->records().empty()) {
    const auto carry = [&](std::shared_ptr<const void> owner) {
      pp::RecordBatchBuilder carrier(o);
      carrier.append_encoded(batch->records_bytes(), static_cast<std::int32_t>(batch->records().size()),
                             h.base_timestamp, h.max_timestamp, batch->records_crc(), std::move(owner));
      return carrier.build_frame();
    };
    pp::WireFrame borrowed = carry(std::make_shared<int>(0));
    pp::Bytes copied = carry(nullptr).own;
    if (copied != borrowed.flatten()) __builtin_trap();
    pp::patch_producer_state(borrowed, h.producer_id ^ 1, h.producer_epoch, h.base_sequence);
    pp::patch_producer_state(std::span<std::uint8_t>(copied), h.producer_id ^ 1, h.producer_epoch, h.base_sequence);
    if (copied != borrowed.flatten()) __builtin_trap();
  }
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
