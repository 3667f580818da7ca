// Legacy MessageSets (Produce v0-2 from old clients): CRC, one level of
// compressed wrapper, relative offsets; must bound, reject and never crash.
// Whatever decodes must re-encode (magic 1, plain) to the same keys and values.
#include <cstdint>

#include "proxy/records/message_set.h"
#include "proxy/records/message_set_builder.h"

namespace {

bool same(std::optional<pp::ByteView> a, std::optional<pp::ByteView> b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || pp::bytes_equal(*a, *b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const pp::ByteView input(data, size);
  for (pp::TrailingPartial partial : {pp::TrailingPartial::kReject, pp::TrailingPartial::kIgnore}) {
    pp::MessageSetReadOptions options;
    options.max_decompressed_bytes = 1 << 20;
    options.trailing_partial = partial;
    pp::DecodeBudget budget(1 << 20);  // as the front end charges decoded messages
    options.budget = &budget;
    auto set = pp::decode_message_set(input, options);
    if (budget.used() > budget.cap()) __builtin_trap();
    if (!set) {
      if (set.error().field.empty()) __builtin_trap();
      continue;
    }
    pp::MessageSetBuilder builder(
        pp::MessageSetBuildOptions{1, pp::CompressionCodec::kNone, std::nullopt, pp::TimestampType::kCreateTime});
    for (const pp::LegacyRecordView& r : set->records()) {
      builder.append(r.offset, r.timestamp.value_or(-1), r.key, r.value);
    }
    const pp::Bytes rebuilt = builder.build();
    auto again = pp::decode_message_set(rebuilt);
    if (!again || again->records().size() != set->records().size()) __builtin_trap();
    for (std::size_t i = 0; i < set->records().size(); ++i) {
      const auto& a = set->records()[i];
      const auto& b = again->records()[i];
      if (a.offset != b.offset || !same(a.key, b.key) || !same(a.value, b.value)) __builtin_trap();
    }
  }
  return 0;
}
