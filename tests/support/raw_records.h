// A RecordBatch v2 whose records are written field by field, so a test can
// give them the offset and timestamp deltas a client might (gaps, a base
// timestamp below the first record's), which RecordBatchBuilder never writes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "proxy/records/record_batch_builder.h"
#include "proxy/records/varint.h"

namespace pp::test {

// Record i has no key, the value values[i] (or "v<i>"), no headers, and the
// i-th pair's offset delta and timestamp delta (from `base_timestamp`).
inline Bytes batch_with_deltas(const std::vector<std::pair<std::int32_t, std::int64_t>>& offset_and_time_deltas,
                               std::int64_t base_timestamp, TimestampType type = TimestampType::kCreateTime,
                               const std::vector<std::string>& values = {}) {
  Bytes section;
  std::int64_t max_timestamp = base_timestamp;
  std::int32_t i = 0;
  for (const auto& [offset_delta, time_delta] : offset_and_time_deltas) {
    const std::string value = values.empty() ? "v" + std::to_string(i) : values.at(static_cast<std::size_t>(i));
    ++i;
    std::vector<std::uint8_t> body(32 + value.size());
    std::uint8_t* p = body.data();
    *p++ = 0;  // attributes
    p = detail::put_varlong(p, time_delta);
    p = detail::put_varint(p, offset_delta);
    p = detail::put_varint(p, -1);  // null key
    p = detail::put_varint(p, static_cast<std::int32_t>(value.size()));
    std::memcpy(p, value.data(), value.size());
    p += value.size();
    p = detail::put_varint(p, 0);  // no headers
    std::uint8_t length[5];
    section.insert(section.end(), length, detail::put_varint(length, static_cast<std::int32_t>(p - body.data())));
    section.insert(section.end(), body.data(), p);
    max_timestamp = std::max(max_timestamp, base_timestamp + time_delta);
  }
  RecordBatchBuildOptions o;
  o.timestamp_type = type;
  RecordBatchBuilder b(o);
  b.append_encoded(section, static_cast<std::int32_t>(offset_and_time_deltas.size()), base_timestamp, max_timestamp);
  return b.build();
}

}  // namespace pp::test
