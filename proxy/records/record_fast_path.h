// Internal to record_batch_reader.cc: the RecordBatch v2 record decoder for
// well-formed records. It accepts exactly what the checked reader accepts and
// decodes it to the same views, at a fraction of the instructions; anything it
// is not sure of is handed back undecoded, so that the checked reader alone
// decides every error and its field path.
#pragma once

#include <cstdint>
#include <vector>

#include "proxy/records/decode_budget.h"
#include "proxy/records/record.h"

namespace pp::detail {

// Decodes the DefaultRecord at `record` (the section ends at `end`) onto the
// back of `out`, charging its headers to `budget` as the checked reader does.
// Returns the first byte past the record, or nullptr when the record is not
// well formed; then `out` and `budget` are as they were.
const std::uint8_t* read_record_fast(const std::uint8_t* record, const std::uint8_t* end, std::vector<RecordView>& out,
                                     DecodeBudget* budget);

}  // namespace pp::detail
